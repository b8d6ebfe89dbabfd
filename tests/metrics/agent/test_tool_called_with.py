from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.tool_called_with import ToolCalledWithMetric

from .helpers import measure, rules_of, trajectory

METRIC = ToolCalledWithMetric(options={"tool": "get_weather", "arguments": {"city": "Paris", "days": 3}})


def test_a_call_with_the_expected_subset_passes() -> None:
    case = trajectory(("get_weather", {"city": "Lyon"}), ("get_weather", {"city": "Paris", "days": 3.0, "u": "C"}))
    score = measure(METRIC, case)
    assert score.value == 1.0 and score.reason == "'get_weather' called with the expected arguments at index 1"


def test_the_closest_call_is_reported() -> None:
    case = trajectory(("get_weather", {"city": "Lyon"}), ("get_weather", {"city": "Paris", "days": 2}))
    score = measure(METRIC, case)
    assert score.value == 0.0
    # index 0 has 2 differences (city, days missing), index 1 has 1 (days): index 1 is the closest
    assert score.metadata["violations"] == [{
        "rule": "tool_called_with", "tool": "get_weather", "index": 1, "argument": "days", "value": 2, "expected": 3,
        "constraint": "equals", "message": "get_weather (index 1): days = 2, expected 3",
    }]


def test_never_called_and_empty_trajectory_fail() -> None:
    for case in (trajectory("search"), trajectory()):
        score = measure(METRIC, case)
        assert score.value == 0.0 and rules_of(score) == ["tool_called_with"]
        assert score.metadata["violations"][0]["constraint"] == "called"


def test_without_arguments_it_is_tool_called() -> None:
    metric = ToolCalledWithMetric(options={"tool": "get_*"})
    assert measure(metric, trajectory(("get_weather", "garbage"))).value == 1.0
    with pytest.raises(ValidationError):
        ToolCalledWithMetric(options={"arguments": {"a": 1}})
