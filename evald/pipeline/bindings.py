"""Which metrics run on which cases: one ``metrics:`` entry becomes one MetricBinding.

Config (one list item under ``metrics:``): ``kind`` (registry kind or ``module:Class``), ``name`` (defaults to
the kind; must be unique), ``threshold`` (defaults to the metric's), ``scope`` (``trace``, ``llm_call`` or
``all``; default ``trace``), ``options`` (validated against the metric's ``Options`` model) and ``filter``
(``service_name``/``model``/``provider``: lists of shell-style globs; a case must match every key given),
``sampling`` (share of traces, by trace id) and ``when`` (conditions on cheaper metrics of the same case; both in
evald/pipeline/conditions.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import Field

from evald.case import EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.pipeline.conditions import Gate, When, make_gate, plan_order


class MetricFilter(ComponentConfig):
    service_name: list[str] | None = Field(None, description="Glob patterns on `service.name`; None = any.")
    model: list[str] | None = Field(None, description="Glob patterns on the request/response model; None = any.")
    provider: list[str] | None = Field(None, description="Glob patterns on the provider (`openai`, ...); None = any.")

    def matches(self, case: EvalCase) -> bool:
        for patterns, value in (
            (self.service_name, case.service_name),
            (self.model, case.model),
            (self.provider, case.provider),
        ):
            if patterns is not None and not any(fnmatchcase(value or "", p) for p in patterns):
                return False
        return True


class MetricSpec(ComponentConfig):
    kind: str = Field(min_length=1, description="Registered metric kind (`evald list-metrics`).")
    name: str | None = Field(None, description="Name in exported series; default: the kind. Must be unique.")
    threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Pass when score >= threshold; default: the metric's own."
    )
    scope: Literal["trace", "llm_call", "conversation", "all"] = Field(
        "trace", description="Which cases: per trace, per LLM call, per conversation (see `conversations`), or all. "
        "`llm_call` cases are built only when some metric has scope `llm_call` or `all`."
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Per-kind options (docs/metrics.md).")
    filter: MetricFilter = Field(MetricFilter(), description="Only cases matching every given list.")
    sampling: float = Field(
        1.0, ge=0.0, le=1.0, description="Share of traces this metric runs on, by trace id (nested: a trace in a "
        "10% sample is in every 20% sample); the others are skipped as `sampled_out`.",
    )
    when: When | None = Field(
        None, description="Run only if other metrics of the case meet these conditions (docs/judges.md); "
        "else skipped as `condition_not_met`.",
    )


class MetricBinding:
    """A built metric plus where it applies."""

    __slots__ = ("metric", "scope", "filter", "_unfiltered", "gate", "wave", "order")

    def __init__(self, metric: BaseMetric, scope: str, metric_filter: MetricFilter, gate: Gate | None = None) -> None:
        self.metric = metric
        self.scope = scope
        self.filter = metric_filter
        self.gate = gate  # None: no sampling, no condition (the scorer's plain path)
        self.wave = 0  # evaluation order among gated metrics (set by plan_order)
        self.order = (0, 1 if metric.is_async else 0, 0)
        self._unfiltered = metric_filter.service_name is None and metric_filter.model is None and (
            metric_filter.provider is None)

    def applies_to(self, case: EvalCase) -> bool:
        return (self.scope == "all" or self.scope == case.scope) and (self._unfiltered or self.filter.matches(case))


def wants_llm_call_cases(bindings: Sequence[MetricBinding]) -> bool:
    """Whether any metric (per-case or multi-case) can score an ``llm_call`` case: scope ``llm_call`` or ``all``.
    When none can, the mappers build trace cases only (evald/mapping/router.py)."""
    return any(b.scope in ("llm_call", "all") for b in bindings)


def build_bindings(specs: list[MetricSpec]) -> list[MetricBinding]:
    """Build metrics from validated specs (``evald.config.loader`` has already checked kinds and options)."""
    from evald.metrics.registry import get_metric_class

    bindings = []
    for spec in specs:
        cls = get_metric_class(spec.kind)
        metric = cls(threshold=spec.threshold, options=spec.options, name=spec.name)
        bindings.append(MetricBinding(metric, spec.scope, spec.filter, make_gate(spec.sampling, spec.when)))
    if any(spec.when is not None for spec in specs):
        plan_order(bindings, [spec.when for spec in specs])
    return bindings
