from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.step_efficiency import StepEfficiencyMetric

from .helpers import measure, trajectory


def test_hand_computed_ratio() -> None:
    score = measure(StepEfficiencyMetric(options={"optimal_steps": 4}), trajectory(*"abcdef"))
    assert score.value == pytest.approx(4 / 6)  # min(1, 4 / 6)
    assert score.passed  # default threshold 0.5: up to twice the optimum
    assert score.metadata["violations"] == [{"rule": "step_efficiency", "value": 6, "constraint": "optimal_steps: 4",
                                             "message": "6 tool call(s) where 4 would do (2 extra)"}]
    over = measure(StepEfficiencyMetric(options={"optimal_steps": 2}), trajectory(*"abcde"))
    assert over.value == pytest.approx(0.4) and not over.passed  # 2 / 5


def test_at_or_below_the_optimum_scores_one() -> None:
    metric = StepEfficiencyMetric(options={"optimal_steps": 3})
    assert measure(metric, trajectory("a", "b", "c")).value == 1.0
    assert measure(metric, trajectory("a")).value == 1.0
    empty = measure(metric, trajectory())
    assert empty.value == 1.0 and empty.metadata["violation_count"] == 0


def test_optimum_from_expected_tools() -> None:
    case = trajectory("search", "search", "search", "answer", expected_tools=("search", "answer"))
    assert measure(StepEfficiencyMetric(), case).value == 0.5  # 2 / 4
    assert measure(StepEfficiencyMetric(), trajectory("a", expected_tools=())).value == 0.0  # 0 / 1
    assert measure(StepEfficiencyMetric(), trajectory(expected_tools=())).value == 1.0


def test_not_applicable_without_an_optimum() -> None:
    assert StepEfficiencyMetric().measure(trajectory("a", "b")) is None


def test_negative_optimum_is_rejected() -> None:
    with pytest.raises(ValidationError):
        StepEfficiencyMetric(options={"optimal_steps": -1})
