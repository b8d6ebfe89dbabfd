"""``time_to_first_token``: a streamed response started within a latency budget."""

from __future__ import annotations

import math
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.operational.latency import BudgetMode, LatencyOptions, budget_value

#: the case metadata key holding the time to first token in milliseconds (filled by the mapper from
#: ``gen_ai.server.time_to_first_token`` or the streaming spans)
TTFT_KEY = "time_to_first_token_ms"


class TimeToFirstTokenOptions(LatencyOptions):
    max_ms: float = Field(gt=0, description="time-to-first-token budget in milliseconds (required)")
    mode: BudgetMode = Field("step", description="step: 1 up to max_ms, else 0; linear: decays from target_ms")
    target_ms: float = Field(0.0, ge=0, description="linear mode: time to first token that still scores 1")


class TimeToFirstTokenMetric(BaseMetric):
    """Whether the time to the first streamed token stays within ``max_ms``.

    Reads ``metadata["time_to_first_token_ms"]`` (milliseconds; the mapper fills it from
    ``gen_ai.server.time_to_first_token`` or streaming spans). Same budget as ``latency``: mode ``step``
    scores 1 up to ``max_ms`` and 0 above; mode ``linear`` scores 1 up to ``target_ms``, falling linearly to
    0 at ``max_ms``. Default threshold 0.5. The measured value is in ``metadata``.

    Not applicable when the key is missing or not a finite number (a bool does not count).
    """

    kind: ClassVar[str] = "time_to_first_token"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("metadata",)
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = TimeToFirstTokenOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(TimeToFirstTokenOptions, self.options)
        ttft = eval_case.metadata.get(TTFT_KEY)
        if isinstance(ttft, bool) or not isinstance(ttft, (int, float)) or not math.isfinite(ttft):
            return None
        value = budget_value(float(ttft), opts.max_ms, opts.target_ms, opts.mode)
        relation = "within" if ttft <= opts.max_ms else "over"
        return self.score(
            value, f"time to first token {ttft:.0f} ms is {relation} the {opts.max_ms:g} ms budget",
            time_to_first_token_ms=float(ttft), max_ms=opts.max_ms,
        )
