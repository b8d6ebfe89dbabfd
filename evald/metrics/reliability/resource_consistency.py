"""``resource_consistency``: 1 minus the coefficient of variation of a resource across a group's runs."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, Score
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import GroupMetric, GroupOptions, Run


class ResourceConsistencyOptions(GroupOptions):
    resource_key: str = Field(
        "token_count", min_length=1, description="EvalCase field (token_count, latency_ms, cost_usd, input_tokens, "
        "output_tokens...) or, when no such field, a metadata key",
    )


class ResourceConsistencyMetric(GroupMetric):
    """``max(0, 1 - CV)`` of a resource (tokens by default) across the K runs of a group (C_res of Rabanser et al.).

    harness-evals' ResourceConsistency: CV = sample standard deviation / mean of the resource over the runs that
    have it (0 when the mean is 0). ``token_count`` falls back to input + output tokens when a run has no total.
    Example: tokens [100, 120, 80] (k 3): mean 100, stdev 20, CV 0.2: value 0.8. Metadata: ``mean``, ``stdev``,
    ``cv``, ``resource_key``.

    Not applicable when fewer than 2 runs have the resource.
    """

    kind: ClassVar[str] = "resource_consistency"
    family: ClassVar[str] = "reliability"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("token_count", "latency_ms", "cost_usd", "metadata")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = ResourceConsistencyOptions

    def measure_group(self, runs: Sequence[Run]) -> Score | None:
        key = cast(ResourceConsistencyOptions, self.options).resource_key
        values = [v for v in (_resource(r, key) for r in runs) if v is not None]
        if len(values) < 2:
            return None
        mean, stdev = statistics.mean(values), statistics.stdev(values)
        cv = 0.0 if mean == 0 else stdev / mean
        return self.score(max(0.0, 1.0 - cv), f"{key} varied with CV {cv:.4g} across {len(values)} runs",
                          k=len(values), resource_key=key, mean=mean, stdev=stdev, cv=cv)


def _resource(run: Run, key: str) -> float | None:
    case = run.case
    value = getattr(case, key, None) if key in case.__slots__ else case.metadata.get(key)
    if value is None and key == "token_count" and case.input_tokens is not None and case.output_tokens is not None:
        value = case.input_tokens + case.output_tokens
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
