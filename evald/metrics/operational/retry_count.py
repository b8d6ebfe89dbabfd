"""``retry_count``: the case needed no more retries than allowed."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric


class RetryCountOptions(ComponentConfig):
    max_retries: int = Field(0, ge=0, description="retries that still score 1")


class RetryCountMetric(BaseMetric):
    """Whether the case's retry count stays within ``max_retries``.

    Reads ``retry_count`` (retried LLM or tool calls, as counted by the mapper). Value 1 up to
    ``max_retries``; above it the value is graded down as ``1 / (1 + excess)`` where ``excess = retry_count -
    max_retries``: one retry too many scores 0.5, two 0.33, three 0.25, approaching 0 without reaching it.
    Default threshold 1: any excess fails, and the value tells by how much. ``metadata`` carries the count
    and the limit.

    Not applicable when ``retry_count`` is missing or negative.
    """

    kind: ClassVar[str] = "retry_count"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("retry_count",)
    needs: ClassVar[tuple[str, ...]] = ("retry_count",)
    Options: ClassVar[type[ComponentConfig]] = RetryCountOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(RetryCountOptions, self.options)
        retries = eval_case.retry_count
        if retries is None or retries < 0:
            return None
        excess = max(0, retries - opts.max_retries)
        relation = "within" if excess == 0 else f"{excess} over"
        return self.score(
            1.0 / (1 + excess), f"{retries} retr{'y' if retries == 1 else 'ies'}, {relation} the limit of "
            f"{opts.max_retries}", retry_count=retries, max_retries=opts.max_retries,
        )
