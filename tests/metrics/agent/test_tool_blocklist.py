from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.metrics.agent.tool_blocklist import ToolBlocklistMetric

from .helpers import measure, trajectory

METRIC = ToolBlocklistMetric(options={"blocklist": ["delete_database", "admin_*", "*_dangerous"]})


def test_no_blocked_call_passes() -> None:
    score = measure(METRIC, trajectory("get_customer", "administer", "dangerous"))
    assert score.value == 1.0 and score.passed and score.reason == "no blocked tool called"
    assert score.metadata == {"calls_found": 0, "violations": [], "violation_count": 0}


def test_blocked_calls_fail_with_one_violation_each() -> None:
    score = measure(METRIC, trajectory("get_customer", "admin_delete", "run_dangerous", "admin_delete"))
    assert score.value == 0.0 and not score.passed  # 1/0 metric: any blocked call is a 0
    assert score.metadata["calls_found"] == 3
    assert score.metadata["violations"][0] == {
        "rule": "blocklist", "tool": "admin_delete", "index": 1, "constraint": "blocklist: admin_*",
        "message": "blocked tool admin_delete called at index 1 (blocklist includes 'admin_*')",
    }
    assert [v["index"] for v in score.metadata["violations"]] == [1, 2, 3]


def test_empty_trajectory_applies_and_passes() -> None:
    assert measure(METRIC, trajectory()).value == 1.0


def test_blocklist_is_required_and_not_empty() -> None:
    with pytest.raises(ValidationError):
        ToolBlocklistMetric()
    with pytest.raises(ValidationError):
        ToolBlocklistMetric(options={"blocklist": []})
    assert ToolBlocklistMetric(options={"blocklist": "admin_*"}).measure(trajectory("admin_x")) is not None
