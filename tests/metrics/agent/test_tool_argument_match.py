from __future__ import annotations

from typing import Any

import pytest

from evald.case import ToolCall
from evald.metrics.agent.tool_argument_match import ToolArgumentMatchMetric, maximum_matching

from .helpers import measure, rules_of, trajectory

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}


def score_of(case: Any, **options: Any) -> Any:
    return measure(ToolArgumentMatchMetric(options=options), case)


def test_exact_is_the_default_and_extra_arguments_fail_it() -> None:
    case = trajectory(("get_weather", {"city": "Paris", "units": "C"}), expected=[WEATHER])
    exact = score_of(case)
    assert exact.value == 0.0 and exact.metadata["mode"] == "exact"
    assert exact.metadata["violations"][0] | {"message": ""} == {
        "rule": "argument_match", "tool": "get_weather", "index": 0, "argument": "units", "value": "C",
        "constraint": "exact", "message": ""}
    assert score_of(case, mode="subset").value == 1.0
    assert score_of(case, ignore_keys=["units"]).value == 1.0


def test_hand_computed_share_of_matched_calls() -> None:
    case = trajectory(("get_weather", {"city": "Paris"}), ("send_email", {"to": "a@b.c", "body": "hi"}),
                      expected=[WEATHER, {"name": "send_email", "arguments": {"to": "x@y.z"}},
                                {"name": "book_flight", "arguments": {}}])
    score = score_of(case, mode="subset")
    # get_weather matches; send_email has to = "a@b.c" (expected "x@y.z"); book_flight never called: 1/3
    assert score.value == pytest.approx(1 / 3) and not score.passed
    assert rules_of(score) == ["argument_match", "missing_call"]
    assert score.metadata["violations"][0]["value"] == "a@b.c"
    assert score.metadata["violations"][0]["expected"] == "x@y.z"


def test_the_pairing_is_a_maximum_matching_not_greedy() -> None:
    # greedy would give the lenient first expectation call 0, leaving none for the strict second one
    case = trajectory(("get_weather", {"city": "Paris", "units": "C"}), ("get_weather", {"city": "Paris"}),
                      expected=[WEATHER, {"name": "get_weather", "arguments": {"city": "Paris", "units": "C"}}])
    assert score_of(case, mode="subset").value == 1.0
    assert maximum_matching([[0, 1], [0]]) == {0: 1, 1: 0}
    assert maximum_matching([[0], [0]]) == {0: 0}


def test_each_actual_call_matches_one_expected_call() -> None:
    case = trajectory(("get_weather", {"city": "Paris"}), expected=[WEATHER, WEATHER])
    assert score_of(case).value == 0.5


def test_option_wins_and_the_order_is_not_checked() -> None:
    case = trajectory(("b", {}), ("a", {"x": 1}), expected=[{"name": "zzz"}])
    options = {"expected_calls": [{"name": "a", "arguments": {"x": 1.0}}, {"name": "b"}]}
    assert score_of(case, **options).value == 1.0  # 1 == 1.0 in JSON


def test_values_compare_as_json() -> None:
    case = trajectory(("flag", {"on": 1}), expected=[{"name": "flag", "arguments": {"on": True}}])
    assert score_of(case).value == 0.0  # true is not 1


def test_expected_from_the_case_accepts_dicts_toolcalls_and_json_text() -> None:
    case = trajectory(("get_weather", '{"city": "Paris"}'),
                      expected=(ToolCall("get_weather", {"city": "Paris"}),))
    assert score_of(case).value == 1.0
    case = trajectory(("get_weather", {"city": "Paris"}),
                      expected=[{"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "c1"}])
    assert score_of(case).value == 1.0


def test_non_object_arguments_are_reported() -> None:
    case = trajectory(("get_weather", "Paris"), expected=[WEATHER])
    score = score_of(case)
    assert score.value == 0.0 and rules_of(score) == ["arguments_not_object"]


def test_empty_trajectory_scores_zero() -> None:
    score = score_of(trajectory(expected=[WEATHER]))
    assert score.value == 0.0 and rules_of(score) == ["missing_call"]


@pytest.mark.parametrize("expected", [None, "Paris", [], ["get_weather"], [{"arguments": {}}], [{"name": ""}],
                                      [{"name": "a", "arguments": [1]}]])
def test_not_applicable_without_expected_calls(expected: Any) -> None:
    assert ToolArgumentMatchMetric().measure(trajectory(("get_weather", {}), expected=expected)) is None
    assert ToolArgumentMatchMetric(options={"expected_calls": []}).measure(trajectory(expected=expected)) is None
