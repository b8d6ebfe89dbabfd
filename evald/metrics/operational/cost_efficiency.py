"""``cost_efficiency``: how far below a per-request cost ceiling the case stayed (harness-evals' CostEfficiency)."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.operational.cost import CostMetric, ModelPrice


class CostEfficiencyOptions(ComponentConfig):
    max_cost_usd: float = Field(0.10, gt=0, description="cost at which the value reaches 0, in USD")
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="extra or overriding model prices (as `cost`'s `prices`)"
    )


class CostEfficiencyMetric(CostMetric):
    """``max(0, 1 - cost_usd / max_cost_usd)``: 1 for a free request, 0 at or above the ceiling.

    harness-evals' CostEfficiency. The cost is found exactly as ``cost`` finds it (the span's ``cost_usd``, else
    the token counts priced from the shipped table merged with ``prices``). ``cost`` with ``mode: linear``,
    ``target_usd: 0`` and ``max_usd`` = ``max_cost_usd`` computes the same value: this kind exists so that the
    seed catalog's name and defaults (ceiling 0.10 USD, threshold 0.5) work unchanged. Example: 0.03 USD against
    0.10 scores 0.7.

    Not applicable when the case has no cost and cannot be priced (harness-evals scores that 0).
    """

    kind: ClassVar[str] = "cost_efficiency"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    Options: ClassVar[type[ComponentConfig]] = CostEfficiencyOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        ceiling = cast(CostEfficiencyOptions, self.options).max_cost_usd
        found = self._cost(eval_case)  # exactly as `cost` finds it
        if found is None:
            return None
        cost, metadata = found
        return self.score(max(0.0, 1.0 - cost / ceiling), f"cost ${cost:.6f} against the ${ceiling:g} ceiling",
                          **metadata, max_cost_usd=ceiling)
