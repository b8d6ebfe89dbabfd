"""Per-metric `sampling` and `when:` conditions: config validation with YAML paths, nested deterministic sampling,
condition semantics (not applicable / errored = not met), evaluation order across async waves, counted skips."""

from __future__ import annotations

import asyncio

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.metrics.base import BaseMetric
from evald.metrics.remote import MetricUnavailable
from evald.pipeline.bindings import MetricBinding, MetricFilter, MetricSpec, build_bindings
from evald.pipeline.conditions import Condition, make_gate, plan_order
from evald.pipeline.sampling import trace_bucket
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry


class _Fixed(BaseMetric):
    """Scores ``value`` (threshold 0.5), or returns None ("none"), or fails ("error"); records when it ran."""

    kind = "fixed"
    family = "test"
    dimension = Dimension.CORRECTNESS
    default_threshold = 0.5

    def __init__(self, name: str, value: float | str, log: list[str] | None = None) -> None:
        super().__init__(name=name)
        self.value = value
        self.log = log if log is not None else []

    def measure(self, case: EvalCase) -> Score | None:
        self.log.append(self.name)
        if self.value == "none":
            return None
        if self.value == "error":
            raise MetricUnavailable("down")
        assert isinstance(self.value, float)
        return self.score(self.value)


class _AsyncFixed(_Fixed):
    async def a_measure(self, case: EvalCase) -> Score | None:
        await asyncio.sleep(0.01)  # yield, so a wrongly concurrent dependent would run first
        return self.measure(case)


def _bind(
    metric: BaseMetric, sampling: float = 1.0, when: object = None
) -> tuple[MetricBinding, list[Condition] | None]:
    spec = MetricSpec.model_validate({"kind": "error_free", "sampling": sampling, "when": when})
    return MetricBinding(metric, "all", MetricFilter(), make_gate(spec.sampling, spec.when)), spec.when


def _planned(*pairs: tuple[MetricBinding, list[Condition] | None]) -> list[MetricBinding]:
    bindings = [b for b, _ in pairs]
    plan_order(bindings, [w for _, w in pairs])
    return bindings


def _case(trace_id: str = "a" * 32) -> EvalCase:
    return EvalCase(trace_id=trace_id, input="q", output="a")


def _problems(yaml_text: str) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        parse_config(yaml_text)
    return list(info.value.problems)


def test_config_accepts_one_condition_a_list_and_any_and_builds_gates_only_where_needed() -> None:
    config = parse_config("""
metrics:
  - { kind: error_free }
  - { kind: latency, options: { max_ms: 1000 }, sampling: 0.25 }
  - { kind: contains, options: { values: [a] }, when: { metric: error_free, passed: true } }
  - kind: json_valid
    when:
      - { metric: latency, score_below: 0.5 }
      - any: [ { metric: error_free, passed: false }, { metric: contains, score_at_least: 0.9 } ]
""")
    bindings = build_bindings(config.metrics)
    assert [b.gate is not None for b in bindings] == [False, True, True, True]
    assert config.metrics[2].when is not None and config.metrics[2].when[0].metric == "error_free"
    assert config.metrics[3].when is not None and len(config.metrics[3].when) == 2
    plain = build_bindings(parse_config("metrics: [{ kind: error_free }, { kind: json_valid }]").metrics)
    assert all(b.gate is None for b in plain)  # the scorer's plain path: nothing to check per case


def test_config_errors_name_the_yaml_path() -> None:
    problems = dict(_problems("""
metrics:
  - { kind: error_free, scope: trace }
  - { kind: json_valid, scope: llm_call, when: { metric: error_free, passed: true } }
  - { kind: contains, options: { values: [a] }, when: [ { metric: latency, passed: true } ] }
  - { kind: latency, options: { max_ms: 5 }, when: { any: [ { metric: nope, passed: true } ] } }
"""))
    assert "never scores" in problems["metrics[1].when[0].metric"]
    assert "unknown metric 'nope'" in problems["metrics[3].when[0].any[0].metric"]
    assert set(problems) == {"metrics[1].when[0].metric", "metrics[3].when[0].any[0].metric"}
    shape = dict(_problems("""
metrics:
  - { kind: error_free, sampling: 1.5 }
  - { kind: json_valid, when: { metric: error_free } }
  - { kind: contains, options: { values: [a] }, when: { metric: error_free, passed: true, any: [] } }
"""))
    assert "less than or equal to 1" in shape["metrics[0].sampling"]
    assert "needs `passed`" in shape["metrics[1].when[0]"]
    assert "at least 1 item" in shape["metrics[2].when[0].any"]


def test_config_rejects_cycles_including_a_metric_gated_on_itself() -> None:
    cycle = _problems("""
metrics:
  - { kind: error_free, when: { metric: contains, passed: true } }
  - { kind: json_valid, when: { metric: error_free, passed: true } }
  - { kind: contains, options: { values: [a] }, when: { metric: json_valid, passed: true } }
""")
    assert [msg for _, msg in cycle] == ["`when` cycle: error_free -> contains -> json_valid -> error_free"]
    assert cycle[0][0] == "metrics[0].when"
    own = _problems("metrics: [{ kind: error_free, when: { metric: error_free, passed: false } }]")
    assert own == [("metrics[0].when", "`when` cycle: error_free -> error_free")]


def test_sampling_is_deterministic_nested_and_shared_across_metrics() -> None:
    ids = [f"{i:032x}" for i in range(4000)]
    gate10, gate10b, gate20 = make_gate(0.1, None), make_gate(0.1, None), make_gate(0.2, None)
    assert gate10 is not None and gate10b is not None and gate20 is not None
    in10 = {t for t in ids if gate10.blocked(_case(t), {}) is None}
    in20 = {t for t in ids if gate20.blocked(_case(t), {}) is None}
    assert in10 == {t for t in ids if gate10b.blocked(_case(t), {}) is None}  # two metrics judge the same traces
    assert in10 < in20  # a trace in the 10% sample is in every 20% sample
    assert in10 == {t for t in ids if trace_bucket(t) < 0.1}  # the same hash as the top-level sampler
    assert 300 < len(in10) < 500 and 650 < len(in20) < 950
    none = make_gate(0.0, None)
    assert none is not None and all(none.blocked(_case(t), {}) == "sampled_out" for t in ids[:50])
    assert make_gate(1.0, None) is None


async def test_sampled_out_metrics_are_counted_skips_never_errors_or_zeros() -> None:
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0)
    bindings = _planned(_bind(_Fixed("cheap", 0.9)), _bind(_AsyncFixed("judge", 0.8), sampling=0.3))
    ids = [f"{i:032x}" for i in range(200)]
    results = [await scorer.score(_case(t), bindings) for t in ids]
    sampled = {t for t in ids if trace_bucket(t) < 0.3}
    for trace_id, result in zip(ids, results, strict=True):
        names = [s.name for s in result.scores]
        assert names == (["cheap", "judge"] if trace_id in sampled else ["cheap"])
        assert result.skipped == (() if trace_id in sampled else (("judge", "sampled_out"),))
        assert result.errors == ()
    sample = tm.registry.get_sample_value
    assert sample("evald_metric_skips_total", {"metric": "judge", "reason": "sampled_out"}) == 200 - len(sampled)


@pytest.mark.parametrize(
    ("cheap", "when", "runs"),
    [
        (0.9, {"metric": "cheap", "passed": True}, True),
        (0.1, {"metric": "cheap", "passed": True}, False),
        (0.1, {"metric": "cheap", "passed": False}, True),
        (0.3, {"metric": "cheap", "score_below": 0.5}, True),
        (0.5, {"metric": "cheap", "score_below": 0.5}, False),
        (0.5, {"metric": "cheap", "score_at_least": 0.5}, True),
        (0.7, [{"metric": "cheap", "passed": True}, {"metric": "cheap", "score_below": 0.6}], False),
        (0.7, {"any": [{"metric": "cheap", "score_below": 0.6}, {"metric": "cheap", "passed": True}]}, True),
        (0.7, {"any": [{"metric": "cheap", "score_below": 0.6}, {"metric": "cheap", "passed": False}]}, False),
        ("none", {"metric": "cheap", "passed": False}, False),  # not applicable: not met, whatever the test
        ("error", {"metric": "cheap", "passed": False}, False),  # errored: not met
        ("none", {"any": [{"metric": "cheap", "passed": False}, {"metric": "cheap", "passed": True}]}, False),
    ],
)
async def test_when_conditions(cheap: float | str, when: object, runs: bool) -> None:
    tm = Telemetry()
    log: list[str] = []
    bindings = _planned(_bind(_AsyncFixed("judge", 0.8, log), when=when), _bind(_Fixed("cheap", cheap, log)))
    result = await CaseScorer(tm, metric_timeout=5.0).score(_case(), bindings)
    assert ("judge" in log) is runs
    assert ("judge" in [s.name for s in result.scores]) is runs
    assert (("judge", "condition_not_met") in result.skipped) is not runs
    expected = None if runs else 1.0
    sample = tm.registry.get_sample_value
    assert sample("evald_metric_skips_total", {"metric": "judge", "reason": "condition_not_met"}) == expected


async def test_async_metric_gated_on_another_async_metric_runs_in_a_later_wave() -> None:
    log: list[str] = []
    screen = _AsyncFixed("screen", 0.2, log)  # a cheap judge that flags (fails) the case
    bindings = _planned(
        _bind(_AsyncFixed("deep", 0.9, log), when={"metric": "screen", "passed": False}),
        _bind(screen),
        _bind(_Fixed("sync_after", 0.9, log), when={"metric": "deep", "passed": True}),
        _bind(_AsyncFixed("other", 0.9, log), when={"metric": "sync_after", "passed": True}),
    )
    assert [b.wave for b in bindings] == [1, 0, 2, 2]
    result = await CaseScorer(Telemetry(), metric_timeout=5.0).score(_case(), bindings)
    assert log == ["screen", "deep", "sync_after", "other"]
    assert sorted(s.name for s in result.scores) == ["deep", "other", "screen", "sync_after"]
    screen.value = 0.9  # not flagged: the whole chain is skipped, each with its reason
    result = await CaseScorer(Telemetry(), metric_timeout=5.0).score(_case(), bindings)
    assert [s.name for s in result.scores] == ["screen"]
    assert sorted(result.skipped) == [("deep", "condition_not_met"), ("other", "condition_not_met"),
                                      ("sync_after", "condition_not_met")]


async def test_sampled_out_reference_makes_its_dependents_not_met() -> None:
    bindings = _planned(
        _bind(_Fixed("cheap", 0.9), sampling=0.0), _bind(_AsyncFixed("judge", 0.9), when={"metric": "cheap",
                                                                                         "passed": True}),
    )
    result = await CaseScorer(Telemetry(), metric_timeout=5.0).score(_case(), bindings)
    assert sorted(result.skipped) == [("cheap", "sampled_out"), ("judge", "condition_not_met")]


def test_plan_order_rejects_unknown_references_and_cycles_built_without_the_loader() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        _planned(_bind(_Fixed("a", 0.9), when={"metric": "b", "passed": True}))
    with pytest.raises(ValueError, match="cycle: a -> b -> a"):
        _planned(_bind(_Fixed("a", 0.9), when={"metric": "b", "passed": True}),
                 _bind(_Fixed("b", 0.9), when={"metric": "a", "passed": True}))


async def test_begin_returns_the_waves_before_the_first_async_one_and_finish_the_rest() -> None:
    log: list[str] = []
    bindings = _planned(
        _bind(_Fixed("cheap", 0.9, log)),
        _bind(_AsyncFixed("screen", 0.2, log)),
        _bind(_Fixed("cheap_if_cheap", 0.9, log), when={"metric": "cheap", "passed": True}),
        _bind(_Fixed("after_screen", 0.9, log), when={"metric": "screen", "passed": False}),
        _bind(_AsyncFixed("deep", 0.9, log), when={"metric": "after_screen", "passed": True}),
    )
    scorer = CaseScorer(Telemetry(), metric_timeout=5.0)
    plan = scorer.plan(bindings)
    first, remainder = scorer.begin(_case(), plan)
    assert first is not None and log == ["cheap", "cheap_if_cheap"]  # nothing asynchronous has run yet
    assert sorted(s.name for s in first.scores) == ["cheap", "cheap_if_cheap"]
    rest = await scorer.finish(_case(), plan, remainder)
    assert log == ["cheap", "cheap_if_cheap", "screen", "after_screen", "deep"]
    assert sorted(s.name for s in rest.scores) == ["after_screen", "deep", "screen"]  # disjoint from the first part
    whole = await scorer.score(_case(), plan)
    assert sorted(s.name for s in whole.scores) == sorted(s.name for s in (*first.scores, *rest.scores))
