"""CaseScorer outcomes: scores, not-applicable skips, deliberate skips with a reason, and errors."""

from __future__ import annotations

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.metrics.base import BaseMetric
from evald.metrics.remote import MetricSkipped, MetricUnavailable
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry


class _Fixed(BaseMetric):
    kind = "fixed"
    family = "test"
    dimension = Dimension.CORRECTNESS

    def __init__(self, name: str, behaviour: str) -> None:
        super().__init__(name=name)
        self.behaviour = behaviour

    def measure(self, case: EvalCase) -> Score | None:
        if self.behaviour == "none":
            return None
        if self.behaviour == "skip":
            raise MetricSkipped("budget_exhausted", "daily budget spent")
        if self.behaviour == "unavailable":
            raise MetricUnavailable("judge 'x': timeout")
        return self.score(0.75, "fixed")


class _AsyncSkip(_Fixed):
    async def a_measure(self, case: EvalCase) -> Score | None:
        raise MetricSkipped("circuit_open")


def _binding(metric: BaseMetric) -> MetricBinding:
    return MetricBinding(metric, "all", MetricFilter())


@pytest.mark.asyncio
async def test_each_outcome_lands_in_its_place_and_skips_are_counted_by_reason() -> None:
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0)
    bindings = [
        _binding(_Fixed("scored", "score")), _binding(_Fixed("na", "none")), _binding(_Fixed("budget", "skip")),
        _binding(_Fixed("down", "unavailable")), _binding(_AsyncSkip("breaker", "score")),
    ]
    result = await scorer.score(EvalCase(trace_id="t" * 32, input="q", output="a"), bindings)
    assert [(s.name, s.value) for s in result.scores] == [("scored", 0.75)]
    assert sorted(result.skipped) == [("breaker", "circuit_open"), ("budget", "budget_exhausted"),
                                      ("na", "not_applicable")]
    assert [name for name, _ in result.errors] == ["down"]
    assert "timeout" in result.errors[0][1]
    sample = tm.registry.get_sample_value
    assert sample("evald_metric_skips_total", {"metric": "budget", "reason": "budget_exhausted"}) == 1.0
    assert sample("evald_metric_skips_total", {"metric": "breaker", "reason": "circuit_open"}) == 1.0
    assert sample("evald_metric_skips_total", {"metric": "na", "reason": "not_applicable"}) == 1.0
    assert sample("evald_metric_errors_total", {"metric": "down", "reason": "exception"}) == 1.0


class _BadResult(_Fixed):
    def measure(self, case: EvalCase) -> Score | None:
        return 0.5  # type: ignore[return-value]  # a metric bug: not a Score


@pytest.mark.asyncio
async def test_synchronous_metrics_are_scored_inline_with_the_same_outcomes() -> None:
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0)
    plan = scorer.plan([
        _binding(_Fixed("scored", "score")), _binding(_Fixed("na", "none")), _binding(_Fixed("budget", "skip")),
        _binding(_Fixed("down", "unavailable")), _binding(_BadResult("bad", "score")),
    ])
    assert plan.inline and not scorer.plan([_binding(_AsyncSkip("breaker", "score"))]).inline
    result = await scorer.score(EvalCase(trace_id="t" * 32, input="q", output="a"), plan)
    assert [(s.name, s.value) for s in result.scores] == [("scored", 0.75)]
    assert result.skipped == (("na", "not_applicable"), ("budget", "budget_exhausted"))
    assert [name for name, _ in result.errors] == ["down", "bad"]
    assert "timeout" in result.errors[0][1] and "not Score or None" in result.errors[1][1]
    assert result.metric_dimensions == {name: "correctness" for name in ("scored", "na", "budget", "down", "bad")}
    sample = tm.registry.get_sample_value
    assert sample("evald_metric_skips_total", {"metric": "budget", "reason": "budget_exhausted"}) == 1.0
    assert sample("evald_metric_errors_total", {"metric": "down", "reason": "exception"}) == 1.0
    assert sample("evald_metric_errors_total", {"metric": "bad", "reason": "bad_result"}) == 1.0
    assert sample("evald_metric_duration_seconds_count", {"metric": "scored"}) == 1.0


class _AsyncScore(_Fixed):
    async def a_measure(self, case: EvalCase) -> Score | None:
        return self.measure(case)


async def test_begin_runs_the_synchronous_metrics_and_finish_the_asynchronous_ones() -> None:
    scorer = CaseScorer(Telemetry(), metric_timeout=5.0)
    plan = scorer.plan([_binding(_Fixed("cheap", "score")), _binding(_AsyncScore("judge", "score")),
                        _binding(_Fixed("na", "none")), _binding(_AsyncSkip("open", "score"))])
    case = EvalCase(trace_id="a" * 32, input="q", output="a")
    first, remainder = scorer.begin(case, plan)
    assert first is not None and [s.name for s in first.scores] == ["cheap"]
    assert first.skipped == (("na", "not_applicable"),)
    rest = await scorer.finish(case, plan, remainder)
    assert [s.name for s in rest.scores] == ["judge"] and rest.skipped == (("open", "circuit_open"),)
    assert not rest.errors
    only_async = scorer.plan([_binding(_AsyncScore("judge", "score"))])
    assert scorer.begin(case, only_async)[0] is None  # nothing to export before the judge
