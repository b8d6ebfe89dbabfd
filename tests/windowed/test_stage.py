"""The windowed stage on its own: groups scored at K, composites waiting for a judged part, windows and their gauges,
and every bound counted."""

from __future__ import annotations

from typing import Any

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.metrics.multi_case import WINDOW_ATTRIBUTES
from evald.metrics.registry import get_metric_class
from evald.model import ScoredCase
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.telemetry import Telemetry
from evald.testing import FakeClock
from evald.windowed.stage import WindowedStage


def bind(kind: str, name: str | None = None, **options: Any) -> MetricBinding:
    return MetricBinding(get_metric_class(kind)(options=options, name=name), "all", MetricFilter())


def case(n: int, output: str = "Paris", **attrs: Any) -> EvalCase:
    return EvalCase(input="capital of France?", output=output, trace_id=f"{n:032x}", span_id=f"{n:016x}",
                    service_name="svc", model="m", metadata={WINDOW_ATTRIBUTES: attrs} if attrs else {})


def scored(c: EvalCase, *scores: Score, planned: tuple[str, ...] = ()) -> ScoredCase:
    dims = {name: "correctness" for name in planned} | {s.name: "correctness" for s in scores}
    return ScoredCase(c, scores, metric_dimensions=dims)


def sample(tm: Telemetry, name: str, **labels: str) -> float | None:
    return tm.registry.get_sample_value(name, labels)


def test_a_group_is_scored_at_k_on_its_latest_case_and_starts_again() -> None:
    tm = Telemetry()
    stage = WindowedStage([bind("outcome_consistency", k=3)], tm)
    outputs = ["Paris", "Paris", "Lyon", "Paris"]
    results = [stage.observe([scored(case(i, out, **{"evald.run_group": "probe-1"}))])
               for i, out in enumerate(outputs)]
    assert [len(r) for r in results] == [0, 0, 1, 0]
    (group,) = results[2]
    assert group.case.trace_id == f"{2:032x}" and group.case.input == "capital of France?"  # exported whole
    (score,) = group.scores
    assert score.name == "outcome_consistency" and score.value == pytest.approx(2 / 3)
    assert score.metadata["trace_ids"] == [f"{i:032x}" for i in range(3)] and score.metadata["runs"] == 3
    assert group.metric_dimensions == {"outcome_consistency": "correctness"}
    assert sample(tm, "evald_windowed_scores_total", metric="outcome_consistency") == 1
    stage.observe([scored(case(9))])  # no run group attribute
    assert sample(tm, "evald_windowed_dropped_total", metric="outcome_consistency", reason="no_group_key") == 1


def test_input_grouping_and_robustness_with_an_outcome_metric() -> None:
    stage = WindowedStage([bind("prompt_robustness", group_by="input", k=3, outcome_metric="exact_match")],
                          Telemetry(), ["exact_match"])
    passed, failed = Score("exact_match", 1.0, 1.0), Score("exact_match", 0.0, 1.0)
    out = stage.observe([scored(case(1), passed), scored(case(2, **{"evald.variant": "rephrased"}), failed),
                         scored(case(3, **{"evald.variant": "typos"}), passed)])
    (group,) = out
    assert group.scores[0].value == pytest.approx(0.5)  # nominal 1/1, perturbed 1/2


def test_a_composite_waits_for_the_judged_part_of_its_case() -> None:
    stage = WindowedStage([bind("composite", name="quality", weights={"exact_match": 1, "judge": 3})], Telemetry(),
                          ["exact_match", "judge"])
    c = case(1)
    assert stage.observe([scored(c, Score("exact_match", 1.0, 1.0), planned=("judge",))]) == []
    (out,) = stage.observe([scored(c, Score("judge", 0.6, 0.5), planned=("exact_match",))])
    assert out.scores[0].name == "quality" and out.scores[0].value == pytest.approx((1.0 + 3 * 0.6) / 4)
    # a weighted metric not planned for the case counts as absent at once; a skipped one once it reported
    (alone,) = stage.observe([scored(case(2), Score("exact_match", 0.0, 1.0))])
    assert alone.scores[0].value == 0.0
    skipped = ScoredCase(case(3), (Score("exact_match", 1.0, 1.0),), skipped=(("judge", "missing_input"),),
                         metric_dimensions={"exact_match": "correctness", "judge": "correctness"})
    (partial,) = stage.observe([skipped])
    assert partial.scores[0].value == 1.0 and partial.scores[0].metadata["matched_metrics"] == ["exact_match"]


def test_remediation_quality_index_and_unknown_references() -> None:
    stage = WindowedStage([bind("remediation_quality_index")], Telemetry(), ["code_safety"])
    (out,) = stage.observe([scored(case(1), Score("code_safety", 0.4, 0.5, dimension=Dimension.SAFETY))])
    assert out.scores[0].value == pytest.approx(0.4) and out.metric_dimensions["remediation_quality_index"] == "safety"
    with pytest.raises(ValueError, match="unknown metric"):
        WindowedStage([bind("composite", weights={"nope": 1})], Telemetry(), ["exact_match"])


def test_a_window_sets_its_gauges_from_min_cases_and_flushes_run_level_results() -> None:
    tm = Telemetry()
    stage = WindowedStage([bind("calibration", min_cases=4), bind("discrimination", min_cases=4)], tm)
    pairs = [(0.95, "Paris"), (0.95, "Lyon"), (0.15, "Lyon"), (0.15, "Lyon")]
    labels = {"metric": "calibration", "service_name": "svc", "model": "m"}
    for i, (conf, out) in enumerate(pairs):
        c = case(i, out, **{"evald.confidence": str(conf)})
        assert stage.observe([scored(EvalCase(**{**_fields(c), "expected": "Paris"}))]) == []
        if i < 3:
            assert sample(tm, "evald_window_score", **labels) is None
    assert sample(tm, "evald_window_score", **labels) == pytest.approx(0.7)
    assert sample(tm, "evald_window_cases", **labels) == 4
    assert sample(tm, "evald_window_score", **{**labels, "metric": "discrimination"}) == pytest.approx(5 / 6)
    results = {r.scores[0].name: r.scores[0] for r in stage.flush()}
    assert results["calibration"].metadata["run_level"] is True and results["calibration"].value == pytest.approx(0.7)
    stage.observe([scored(case(7, **{"evald.confidence": 1.5}))])
    assert sample(tm, "evald_windowed_dropped_total", metric="calibration", reason="no_confidence") == 1


def _fields(c: EvalCase) -> dict[str, Any]:
    return {name: getattr(c, name) for name in EvalCase.__dataclass_fields__}


def test_bounds_are_counted() -> None:
    tm, clock = Telemetry(), FakeClock()
    stage = WindowedStage([bind("outcome_consistency", k=2, max_groups=2, max_age=10)], tm, clock=clock)
    for i, group in enumerate(["a", "b", "c"]):
        stage.observe([scored(case(i, **{"evald.run_group": group}))])
    assert sample(tm, "evald_windowed_dropped_total", metric="outcome_consistency", reason="group_evicted") == 1
    clock.advance(11)
    assert stage.observe([scored(case(5, **{"evald.run_group": "c"}))]) == []  # "c" expired: starts again
    assert sample(tm, "evald_windowed_dropped_total", metric="outcome_consistency", reason="group_expired") == 2
    waiting = WindowedStage([bind("composite", weights={"judge": 1})], tm := Telemetry(), ["judge"], max_pending=1,
                            pending_age=5, clock=clock)
    waiting.observe([scored(case(1), planned=("judge",)), scored(case(2), planned=("judge",))])
    assert sample(tm, "evald_windowed_dropped_total", metric="composite", reason="pending_evicted") == 1
    clock.advance(6)
    waiting.observe([])
    waiting.observe([scored(case(3))])
    assert sample(tm, "evald_windowed_dropped_total", metric="composite", reason="pending_expired") == 1
    assert sample(tm, "evald_windowed_pending_cases") == 0


def test_a_large_window_is_scored_at_most_once_a_second_and_afresh_at_flush() -> None:
    """Up to RESCORE_FREE cases a window is scored on every case; beyond, at most once per RESCORE_INTERVAL of the
    stage's clock (the gauge keeps the latest value), so a busy window does not cost a full walk per case."""
    from evald.windowed.sliding import RESCORE_FREE, SlidingWindows

    tm, clock = Telemetry(), FakeClock()
    stage = WindowedStage([bind("brier_score", min_cases=2, window=5000)], tm, clock=clock)
    labels = {"metric": "brier_score", "service_name": "svc", "model": "m"}
    (sliding,) = stage._windows.values()
    assert isinstance(sliding, SlidingWindows)
    walks = [0]  # how many times a window was scored (a walk over its cases each)
    measure_pairs = sliding.metric.measure_pairs

    def counted(pairs: Any) -> Any:
        walks[0] += 1
        return measure_pairs(pairs)

    sliding.metric.measure_pairs = counted  # type: ignore[method-assign]

    def add(n: int, conf: float, output: str) -> None:
        for i in range(n):
            c = case(i, output, **{"evald.confidence": conf})
            stage.observe([scored(EvalCase(**{**_fields(c), "expected": "Paris"}))])

    add(RESCORE_FREE, 1.0, "Paris")  # always right: Brier 0 -> score 1
    assert walks[0] == RESCORE_FREE - 1  # from min_cases on, every case
    assert sample(tm, "evald_window_score", **labels) == pytest.approx(1.0)
    add(500, 1.0, "Lyon")  # confidently wrong, within the same second: the value stands, one walk at most
    assert walks[0] == RESCORE_FREE - 1
    assert sample(tm, "evald_window_score", **labels) == pytest.approx(1.0)
    assert sample(tm, "evald_window_cases", **labels) == RESCORE_FREE + 500  # the size is always current
    clock.advance(1.0)
    add(1, 1.0, "Lyon")
    assert walks[0] == RESCORE_FREE
    assert sample(tm, "evald_window_score", **labels) == pytest.approx(1 - 501 / 1501)
    (run_level,) = stage.flush()
    assert run_level.scores[0].value == pytest.approx(1 - 501 / 1501) and walks[0] == RESCORE_FREE + 1
