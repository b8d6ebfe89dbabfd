"""Consistency and robustness over a group of runs: hand-computed values and harness-evals' classes on the same runs
(tolerance 1e-9)."""

from __future__ import annotations

from typing import Any

import pytest
from harness_evals import EvalCase as HEvalCase
from harness_evals import ToolCall as HToolCall
from harness_evals.metrics.reliability import OutcomeConsistencyMetric as HOutcome
from harness_evals.metrics.reliability import PromptRobustnessMetric as HPrompt
from harness_evals.metrics.reliability import ResourceConsistencyMetric as HResource
from harness_evals.metrics.reliability import TrajectoryConsistencyMetric as HTrajectory

from evald.case import EvalCase, ToolCall
from evald.metrics.multi_case import WINDOW_ATTRIBUTES, Run
from evald.metrics.reliability.environment_robustness import EnvironmentRobustnessMetric
from evald.metrics.reliability.fault_robustness import FaultRobustnessMetric
from evald.metrics.reliability.outcome_consistency import OutcomeConsistencyMetric
from evald.metrics.reliability.prompt_robustness import PromptRobustnessMetric
from evald.metrics.reliability.resource_consistency import ResourceConsistencyMetric
from evald.metrics.reliability.trajectory_consistency import TrajectoryConsistencyMetric


def _runs(**fields: list[Any]) -> list[Run]:
    n = len(next(iter(fields.values())))
    return [Run(EvalCase(**{k: v[i] for k, v in fields.items()})) for i in range(n)]


def _harness(runs: list[Run]) -> HEvalCase:
    hruns = [HEvalCase(input="task", output=r.case.output, token_count=r.case.token_count,
                       tool_calls=[HToolCall(name=c.name) for c in r.case.tool_calls]) for r in runs]
    return HEvalCase(input="task", output=hruns[0].output, runs=hruns)


def test_outcome_consistency() -> None:
    runs = _runs(output=["Paris", "Paris", "Paris", "Lyon"])
    score = OutcomeConsistencyMetric().measure_group(runs)
    assert score is not None and score.value == 0.75
    assert score.value == pytest.approx(HOutcome(k=4).measure(_harness(runs)).value, abs=1e-9)
    assert OutcomeConsistencyMetric().measure_group(_runs(output=["x"])) is None


def test_resource_consistency() -> None:
    runs = _runs(token_count=[100, 120, 80], output=["a", "b", "c"])
    score = ResourceConsistencyMetric().measure_group(runs)
    assert score is not None and score.value == pytest.approx(0.8)  # mean 100, stdev 20
    assert score.value == pytest.approx(HResource(k=3).measure(_harness(runs)).value, abs=1e-9)
    latency = ResourceConsistencyMetric(options={"resource_key": "latency_ms"}).measure_group(
        _runs(latency_ms=[10.0, 10.0, None]))
    assert latency is not None and latency.value == 1.0


@pytest.mark.parametrize(("mode", "value"), [("sequential", (2 / 3 + 1 + 2 / 3) / 3),
                                             ("distributional", None)])
def test_trajectory_consistency(mode: str, value: float | None) -> None:
    paths = [["a", "b", "c"], ["a", "c"], ["a", "b", "c"]]
    runs = [Run(EvalCase(tool_calls=tuple(ToolCall(n) for n in p), output="x")) for p in paths]
    score = TrajectoryConsistencyMetric(options={"mode": mode}).measure_group(runs)
    assert score is not None
    if value is not None:
        assert score.value == pytest.approx(value)
    else:  # cosine of {a,b,c} and {a,c}: 2 / (sqrt 3 * sqrt 2), twice, and 1 once
        assert score.value == pytest.approx((2 * 2 / (3 ** 0.5 * 2 ** 0.5) + 1) / 3)
    assert score.value == pytest.approx(HTrajectory(mode=mode, k=3).measure(_harness(runs)).value, abs=1e-9)


def _variant_runs(nominal: list[bool], perturbed: list[bool]) -> list[Run]:
    out = [Run(EvalCase(output="x"), outcome=o) for o in nominal]
    out += [Run(EvalCase(output="x", metadata={WINDOW_ATTRIBUTES: {"evald.variant": f"p{i}"}}), outcome=o)
            for i, o in enumerate(perturbed)]
    return out


@pytest.mark.parametrize("cls", [PromptRobustnessMetric, EnvironmentRobustnessMetric, FaultRobustnessMetric])
def test_robustness_ratio(cls: type[PromptRobustnessMetric]) -> None:
    runs = _variant_runs([True, True], [True, False, False])
    score = cls().measure_group(runs)
    assert score is not None and score.value == pytest.approx(1 / 3)
    one_nominal = cls().measure_group(_variant_runs([True], [True, False, False]))  # harness-evals: one task
    theirs = HPrompt().measure_robustness([True], [[True, False, False]])
    assert one_nominal is not None and one_nominal.value == pytest.approx(theirs.value, abs=1e-9)
    failing = cls().measure_group(_variant_runs([False], [False]))
    assert failing is not None and failing.value == 1.0  # nominal failed: not attributable to perturbation
    assert cls().measure_group(_variant_runs([True, True], [])) is None
