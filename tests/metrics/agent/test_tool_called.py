from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.tool_called import ToolCalledMetric

from .helpers import measure, trajectory


def test_called_passes_and_counts_the_calls() -> None:
    score = measure(ToolCalledMetric(options={"tool": "get_*"}), trajectory("search", "get_weather", "get_time"))
    assert score.value == 1.0 and score.passed
    assert score.reason == "'get_*' called 2 time(s), first at index 1"
    assert score.metadata == {"calls_found": 2, "violations": [], "violation_count": 0}


def test_not_called_fails_with_a_violation() -> None:
    score = measure(ToolCalledMetric(options={"tool": "get_weather"}), trajectory("search", "Get_Weather"))
    assert score.value == 0.0 and not score.passed  # case-sensitive
    assert score.metadata["violations"] == [{
        "rule": "tool_called", "tool": "get_weather", "value": 0, "constraint": "called at least once",
        "message": "expected 'get_weather' to be called, it was never called (2 call(s) in the trajectory)",
    }]


def test_empty_trajectory_is_a_fail_not_none() -> None:
    score = measure(ToolCalledMetric(options={"tool": "*"}), trajectory())
    assert score.value == 0.0


def test_tool_is_required() -> None:
    with pytest.raises(ValidationError):
        ToolCalledMetric()
