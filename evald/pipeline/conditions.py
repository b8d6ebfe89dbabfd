"""Per-metric gates: ``sampling`` (a share of traces) and ``when`` (run only if cheaper metrics flagged the case).

Config keys (on one ``metrics:`` entry): ``sampling`` (ratio in [0, 1], default 1.0) and ``when``: one condition,
a list of conditions (all must hold), or ``{any: [...]}``. A condition names a ``metric`` of the same case and
one or more tests that must all hold: ``passed: true|false``, ``score_below: x``, ``score_at_least: x``.

Semantics: sampling is decided by ``trace_bucket(trace_id) < sampling`` (the same hash as the top-level
``sampling.ratio``), so the traces in a 10% sample are also in every 20% sample and all metrics with the same
ratio judge the same traces. A condition whose metric was not applicable, skipped or errored on the case is not
met. A gated-out metric is a skip with reason ``sampled_out`` or ``condition_not_met`` (counted in
``evald_metric_skips_total``), never an error and never a 0.

Evaluation order: every metric gets a ``wave``; a metric runs after the metrics it references (synchronous
ones run inline before the asynchronous ones of their wave; an asynchronous reference moves the metric to a later
wave). ``check_conditions`` reports unknown references, scopes that never meet and cycles at config load.
Metrics without ``sampling``/``when`` get no gate: the scorer's path for them is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Self

from pydantic import BeforeValidator, Field, model_validator

from evald.case import EvalCase, Score
from evald.config.base import ComponentConfig
from evald.pipeline.sampling import trace_bucket

if TYPE_CHECKING:
    from evald.pipeline.bindings import MetricBinding, MetricSpec

SAMPLED_OUT = "sampled_out"
CONDITION_NOT_MET = "condition_not_met"


class MetricCheck(ComponentConfig):
    metric: str = Field(min_length=1, description="Name of another metric of the same case (its `name` or kind).")
    passed: bool | None = Field(None, description="Holds when that metric's pass/fail equals this.")
    score_below: float | None = Field(None, ge=0.0, le=1.0, description="Holds when its score is < this.")
    score_at_least: float | None = Field(None, ge=0.0, le=1.0, description="Holds when its score is >= this.")

    @model_validator(mode="after")
    def _has_a_test(self) -> Self:
        if self.passed is None and self.score_below is None and self.score_at_least is None:
            raise ValueError("a condition needs `passed`, `score_below` or `score_at_least`")
        return self

    def holds(self, scores: Mapping[str, Score]) -> bool:
        score = scores.get(self.metric)
        if score is None:  # not applicable, skipped or errored: not met
            return False
        return (
            (self.passed is None or score.passed is self.passed)
            and (self.score_below is None or score.value < self.score_below)
            and (self.score_at_least is None or score.value >= self.score_at_least)
        )


class Condition(ComponentConfig):
    """One check on a metric (``metric`` + tests) or ``any`` of several checks."""

    metric: str | None = Field(None, min_length=1, description="Metric checked (or use `any`).")
    passed: bool | None = Field(None, description="Holds when that metric's pass/fail equals this.")
    score_below: float | None = Field(None, ge=0.0, le=1.0, description="Holds when its score is < this.")
    score_at_least: float | None = Field(None, ge=0.0, le=1.0, description="Holds when its score is >= this.")
    any: list[MetricCheck] | None = Field(
        None, min_length=1, description="Holds when at least one of these checks ({metric, passed...}) holds."
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        tests = (self.passed, self.score_below, self.score_at_least)
        if self.any is not None:
            if self.metric is not None or any(t is not None for t in tests):
                raise ValueError("use either `any: [...]` or `metric` with its tests, not both")
        elif self.metric is None:
            raise ValueError("a condition needs `metric` (with `passed`, `score_below` or `score_at_least`) or `any`")
        elif all(t is None for t in tests):
            raise ValueError("a condition needs `passed`, `score_below` or `score_at_least`")
        return self

    def checks(self) -> list[MetricCheck]:
        if self.any is not None:
            return list(self.any)
        assert self.metric is not None
        return [MetricCheck(metric=self.metric, passed=self.passed, score_below=self.score_below,
                            score_at_least=self.score_at_least)]


def _as_list(value: object) -> object:
    return [value] if isinstance(value, (dict, Condition)) else value


#: ``when:`` as written: one condition (a mapping) or a list of them (all must hold); validated as a list.
When = Annotated[list[Condition], BeforeValidator(_as_list)]


def conditions_of(when: list[Condition] | None) -> list[Condition]:
    return when or []


def referenced(when: list[Condition] | None) -> list[str]:
    return [check.metric for cond in conditions_of(when) for check in cond.checks()]


@dataclass(frozen=True, slots=True)
class Gate:
    """What decides whether one bound metric runs on a case; built only for metrics with sampling or when."""

    ratio: float
    groups: tuple[tuple[MetricCheck, ...], ...]  # all groups must hold; one check per group suffices

    def blocked(self, case: EvalCase, scores: Mapping[str, Score]) -> str | None:
        """The skip reason, or None when the metric runs. ``scores``: the case's results so far, by name."""
        if self.ratio < 1.0 and (self.ratio <= 0.0 or trace_bucket(case.trace_id) >= self.ratio):
            return SAMPLED_OUT
        for group in self.groups:
            if not any(check.holds(scores) for check in group):
                return CONDITION_NOT_MET
        return None


def make_gate(sampling: float, when: list[Condition] | None) -> Gate | None:
    groups = tuple(tuple(cond.checks()) for cond in conditions_of(when))
    if sampling >= 1.0 and not groups:
        return None
    return Gate(sampling, groups)


def plan_order(bindings: Sequence[MetricBinding], whens: Sequence[list[Condition] | None]) -> None:
    """Give each binding its ``wave`` and ``order`` key so that a metric runs after those its ``when`` references.

    Raises ``ValueError`` on an unknown reference or a cycle (the config loader reports both earlier)."""
    by_name = {b.metric.name: i for i, b in enumerate(bindings)}
    deps = [[by_name[name] for name in _known(referenced(w), by_name)] for w in whens]
    waves: dict[int, int] = {}
    order: list[int] = []

    def visit(i: int, path: tuple[int, ...]) -> int:
        if i in waves:
            return waves[i]
        if i in path:
            raise ValueError(f"`when` cycle: {' -> '.join(bindings[j].metric.name for j in (*path, i))}")
        wave = 0
        for d in deps[i]:
            wave = max(wave, visit(d, (*path, i)) + (1 if bindings[d].metric.is_async else 0))
        waves[i] = wave
        order.append(i)
        return wave

    for i in range(len(bindings)):
        visit(i, ())
    for rank, i in enumerate(order):
        b = bindings[i]
        b.wave = waves[i]
        b.order = (waves[i], 1 if b.metric.is_async else 0, rank)


def _known(names: list[str], by_name: Mapping[str, int]) -> list[str]:
    missing = [n for n in names if n not in by_name]
    if missing:
        raise ValueError(f"`when` refers to unknown metric(s): {', '.join(missing)}")
    return names


def check_conditions(specs: Sequence[MetricSpec | None]) -> list[tuple[str, str]]:
    """Config-load problems of ``when``: (YAML path, message) for unknown metrics, disjoint scopes and cycles."""
    from evald.metrics.registry import get_metric_class

    info: dict[str, tuple[int, str]] = {}  # name -> (index, scope)
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        try:
            cls = get_metric_class(spec.kind)
        except (LookupError, ImportError, TypeError):
            continue  # reported by the metrics check
        info.setdefault(spec.name or cls.kind, (i, spec.scope))
    problems: list[tuple[str, str]] = []
    edges: dict[int, list[int]] = {}
    for i, spec in enumerate(specs):
        if spec is None or spec.when is None:
            continue
        for path, name in _reference_paths(f"metrics[{i}].when", spec.when):
            target = info.get(name)
            if target is None:
                known = ", ".join(sorted(info)) or "none"
                problems.append((path, f"unknown metric {name!r} (configured: {known})"))
                continue
            scope = target[1]
            if scope != spec.scope and "all" not in (scope, spec.scope):
                problems.append((path, f"metric {name!r} has scope {scope!r} and never scores this metric's "
                                       f"{spec.scope!r} cases"))
            edges.setdefault(i, []).append(target[0])
    cycle = _find_cycle(edges)
    if cycle:
        names = [_spec_name(specs[j]) for j in cycle]
        problems.append((f"metrics[{cycle[0]}].when", f"`when` cycle: {' -> '.join(names)}"))
    from evald.windowed.references import check_references  # composites and outcome metrics refer to names too

    return problems + check_references(specs)


def _spec_name(spec: MetricSpec | None) -> str:
    return "?" if spec is None else spec.name or spec.kind


def _reference_paths(prefix: str, when: list[Condition]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path, cond in ((f"{prefix}[{k}]", c) for k, c in enumerate(when)):
        if cond.any is not None:
            out += [(f"{path}.any[{k}].metric", check.metric) for k, check in enumerate(cond.any)]
        elif cond.metric is not None:
            out.append((f"{path}.metric", cond.metric))
    return out


def _find_cycle(edges: Mapping[int, list[int]]) -> list[int] | None:
    state: dict[int, int] = {}  # 1 = on the path, 2 = done

    def visit(node: int, path: list[int]) -> list[int] | None:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, path)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [])):
            return found
    return None
