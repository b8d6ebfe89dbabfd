from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.tool_not_called import ToolNotCalledMetric

from .helpers import measure, trajectory

METRIC = ToolNotCalledMetric(options={"tool": "delete_*"})


def test_not_called_passes() -> None:
    score = measure(METRIC, trajectory("get_customer", "undelete"))
    assert score.value == 1.0 and score.reason == "'delete_*' not called"


def test_each_matching_call_is_a_violation() -> None:
    score = measure(METRIC, trajectory("delete_a", "get", "delete_b"))
    assert score.value == 0.0 and score.metadata["calls_found"] == 2
    assert [(v["tool"], v["index"], v["constraint"]) for v in score.metadata["violations"]] == [
        ("delete_a", 0, "not called: delete_*"), ("delete_b", 2, "not called: delete_*")]


def test_empty_trajectory_passes() -> None:
    assert measure(METRIC, trajectory()).value == 1.0


def test_tool_is_required() -> None:
    with pytest.raises(ValidationError):
        ToolNotCalledMetric(options={"tool": ""})
