from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.steps_below import StepsBelowMetric

from .helpers import measure, trajectory


def test_at_the_limit_passes() -> None:
    score = measure(StepsBelowMetric(options={"max_steps": 3}), trajectory("a", "b", "c"))
    assert score.value == 1.0 and score.reason == "3 step(s) within the budget of 3"
    assert score.metadata == {"steps": 3, "max_steps": 3, "violations": [], "violation_count": 0}


def test_over_the_limit_fails() -> None:
    score = measure(StepsBelowMetric(options={"max_steps": 2}), trajectory("a", "b", "c", "d"))
    assert score.value == 0.0 and not score.passed
    assert score.metadata["violations"] == [{
        "rule": "steps_below", "value": 4, "constraint": "max_steps: 2", "index": 2,
        "message": "4 tool call(s), at most 2 allowed (call 3 at index 2 is over)",
    }]


def test_empty_trajectory_and_zero_budget() -> None:
    assert measure(StepsBelowMetric(options={"max_steps": 0}), trajectory()).value == 1.0
    assert measure(StepsBelowMetric(options={"max_steps": 0}), trajectory("a")).value == 0.0


def test_max_steps_is_required_and_not_negative() -> None:
    with pytest.raises(ValidationError):
        StepsBelowMetric()
    with pytest.raises(ValidationError):
        StepsBelowMetric(options={"max_steps": -1})
