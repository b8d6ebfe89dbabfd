from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.metrics.agent.sequence_valid import SequenceValidMetric

from .helpers import measure, rules_of, trajectory


def score_of(rules: list[dict[str, Any]], *calls: str) -> Any:
    return measure(SequenceValidMetric(options={"rules": rules}), trajectory(*calls))


def holds(rule: dict[str, Any], *calls: str) -> bool:
    return bool(score_of([rule], *calls).value == 1.0)


REQUIRE_AUTH = {"type": "require", "tool": "authenticate"}
AUTH_BEFORE_RECORD = {"type": "before", "first": "authenticate", "then": "get_patient_record"}


def test_assay_example_both_rules_fail() -> None:
    score = score_of([REQUIRE_AUTH, AUTH_BEFORE_RECORD], "get_patient_record")
    assert score.value == 0.0 and not score.passed
    assert score.metadata["violations"] == [
        {"rule": "require", "rule_index": 0, "tool": "authenticate", "constraint": "require: authenticate",
         "message": "require: expected 'authenticate' to be called, it was never called"},
        {"rule": "before", "rule_index": 1, "tool": "get_patient_record", "index": 0,
         "constraint": "before: 'authenticate' before 'get_patient_record'",
         "message": "before: get_patient_record called at index 0 without a prior 'authenticate' (it was never "
                    "called)"},
    ]


def test_hand_computed_share_of_satisfied_rules() -> None:
    rules = [REQUIRE_AUTH, AUTH_BEFORE_RECORD, {"type": "blocklist", "tools": ["admin_*", "debug_*"]},
             {"type": "count", "tool": "api_call", "max": 2}]
    # require holds, before holds, blocklist fails (admin_reset), count fails (3 > 2): 2 of 4 rules
    score = score_of(rules, "authenticate", "get_patient_record", "api_call", "api_call", "admin_reset", "api_call")
    assert score.value == 0.5 and not score.passed
    assert score.metadata["rules_checked"] == 4 and score.metadata["rules_satisfied"] == 2
    assert rules_of(score) == ["blocklist", "count"]
    count = score.metadata["violations"][1]
    assert (count["index"], count["value"], count["rule_index"]) == (5, 3, 3)  # the third api_call is over
    assert score.reason is not None and score.reason.startswith("2 of 4 rule(s) satisfied: blocklist: ")


@pytest.mark.parametrize(("calls", "ok"), [
    (("get", "upd"), True), (("upd", "get"), False), (("get", "upd", "get"), True), ((), True), (("get",), True),
    (("x", "upd", "upd", "get"), False),
])
def test_before(calls: tuple[str, ...], ok: bool) -> None:
    assert holds({"type": "before", "first": "get", "then": "upd"}, *calls) is ok


def test_before_reports_each_then_call_ahead_of_first() -> None:
    score = score_of([{"type": "before", "first": "auth", "then": ["read_*", "write_*"]}],
                     "read_a", "write_b", "auth", "read_c")
    assert [v["index"] for v in score.metadata["violations"]] == [0, 1]
    assert score.metadata["violations"][1]["message"].endswith("(first called at index 2)")


@pytest.mark.parametrize(("calls", "ok"), [
    (("validate", "execute"), True), (("validate", "log", "execute"), False), (("execute",), False),
    (("validate", "execute", "execute"), False), (("validate", "execute", "validate", "execute"), True), ((), True),
])
def test_immediately_before_applies_to_every_then_call(calls: tuple[str, ...], ok: bool) -> None:
    assert holds({"type": "immediately_before", "first": "validate", "then": "execute"}, *calls) is ok


def test_blocklist_allowlist_and_globs() -> None:
    assert not holds({"type": "blocklist", "tools": ["*_dangerous"]}, "safe", "run_dangerous")
    assert holds({"type": "blocklist", "tools": "admin_*"}, "administer")  # one glob is accepted as a string
    allow = {"type": "allowlist", "tools": ["get_*", "send_email"]}
    assert holds(allow, "get_customer", "send_email")
    score = score_of([allow], "get_customer", "delete_customer")
    assert rules_of(score) == ["allowlist"] and score.metadata["violations"][0]["tool"] == "delete_customer"


def test_count_min_and_max_and_the_max_calls_alias() -> None:
    assert not holds({"type": "count", "tool": "search", "min": 2}, "search")
    assert holds({"type": "count", "tool": "search", "min": 1, "max": 2}, "search", "search")
    assert not holds({"type": "max_calls", "tool": "send_*", "max": 1}, "send_a", "send_b")


def test_empty_trajectory_applies() -> None:
    rules = [REQUIRE_AUTH, AUTH_BEFORE_RECORD, {"type": "allowlist", "tools": ["x"]},
             {"type": "count", "tool": "x", "min": 1}]
    score = score_of(rules)
    assert score.value == 0.5 and rules_of(score) == ["require", "count"]  # before and allowlist hold vacuously


@pytest.mark.parametrize("rules", [
    [], [{"type": "nope"}], [{"type": "before", "first": "a"}], [{"type": "count", "tool": "a"}],
    [{"type": "count", "tool": "a", "min": 3, "max": 1}], [{"type": "require", "tool": ""}],
    [{"type": "blocklist", "tools": []}], [{"type": "require", "tool": "a", "extra": 1}],
])
def test_bad_rules_are_config_errors(rules: list[dict[str, Any]]) -> None:
    with pytest.raises(ValidationError):
        SequenceValidMetric(options={"rules": rules})
