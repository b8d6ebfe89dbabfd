"""``latency``: the case finished within a latency budget."""

from __future__ import annotations

import math
from typing import ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric

BudgetMode = Literal["step", "linear"]


def budget_value(measured: float, limit: float, target: float, mode: BudgetMode) -> float:
    """1 within budget. step: 0 above ``limit``; linear: 1 up to ``target``, falling linearly to 0 at ``limit``."""
    if mode == "step":
        return 1.0 if measured <= limit else 0.0
    if measured <= target:
        return 1.0
    if measured >= limit:
        return 0.0
    return 1.0 - (measured - target) / (limit - target)


class LatencyOptions(ComponentConfig):
    max_ms: float = Field(gt=0, description="latency budget in milliseconds (required)")
    mode: BudgetMode = Field("step", description="step: 1 up to max_ms, else 0; linear: decays from target_ms")
    target_ms: float = Field(0.0, ge=0, description="linear mode: latency that still scores 1 (below max_ms)")

    @model_validator(mode="after")
    def _target_below_max(self) -> Self:
        if self.target_ms >= self.max_ms:
            raise ValueError(f"target_ms ({self.target_ms:g}) must be below max_ms ({self.max_ms:g})")
        return self


class LatencyMetric(BaseMetric):
    """Whether the case's latency stays within ``max_ms``.

    Reads ``latency_ms`` (an LLM call's span duration, or the trace's extent). Mode ``step`` scores 1 up to
    ``max_ms`` and 0 above; mode ``linear`` scores 1 up to ``target_ms``, falling linearly to 0 at
    ``max_ms``. The default threshold 0.5 makes ``step`` pass exactly within budget and ``linear`` pass up
    to halfway between ``target_ms`` and ``max_ms``. The raw latency is in ``metadata``.

    Not applicable when ``latency_ms`` is missing or not a finite number.
    """

    kind: ClassVar[str] = "latency"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("latency_ms",)
    needs: ClassVar[tuple[str, ...]] = ("latency_ms",)
    Options: ClassVar[type[ComponentConfig]] = LatencyOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(LatencyOptions, self.options)
        latency = eval_case.latency_ms
        if latency is None or not math.isfinite(latency):
            return None
        value = budget_value(latency, opts.max_ms, opts.target_ms, opts.mode)
        relation = "within" if latency <= opts.max_ms else "over"
        return self.score(
            value, f"latency {latency:.0f} ms is {relation} the {opts.max_ms:g} ms budget",
            latency_ms=latency, max_ms=opts.max_ms,
        )
