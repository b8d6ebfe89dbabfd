from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.tool_call_order import ToolCallOrderMetric

from .helpers import measure, trajectory

METRIC = ToolCallOrderMetric(options={"order": ["authenticate", "get_*", "send_email"]})


def test_in_order_with_other_calls_between_passes() -> None:
    score = measure(METRIC, trajectory("log", "authenticate", "log", "get_customer", "get_orders", "send_email"))
    assert score.value == 1.0 and score.passed and score.metadata["steps_in_order"] == 3


def test_hand_computed_partial_order() -> None:
    score = measure(METRIC, trajectory("get_customer", "send_email", "authenticate"))
    # longest in-order part of [authenticate, get_*, send_email] is [get_*, send_email]: 2/3
    assert score.value == pytest.approx(2 / 3) and not score.passed
    assert score.metadata["violations"] == [{
        "rule": "tool_call_order", "tool": "authenticate", "index": 2,
        "expected": "authenticate -> get_* -> send_email",
        "message": "'authenticate' (step 1 of 3) was called out of order (first at index 2)",
    }]


def test_missing_steps_and_empty_trajectory() -> None:
    score = measure(METRIC, trajectory("authenticate"))
    assert score.value == pytest.approx(1 / 3)
    assert [v["message"] for v in score.metadata["violations"]] == [
        "'get_*' (step 2 of 3) was never called", "'send_email' (step 3 of 3) was never called"]
    assert measure(METRIC, trajectory()).value == 0.0


def test_order_needs_two_entries() -> None:
    with pytest.raises(ValidationError):
        ToolCallOrderMetric(options={"order": ["a"]})
