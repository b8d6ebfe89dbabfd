from __future__ import annotations

from typing import Any

import pytest

from evald.case import ToolCall
from evald.metrics.agent.trajectory import (
    MAX_VIOLATIONS,
    align,
    argument_violations,
    arguments_of,
    clip,
    matches,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.deterministic.json_values import json_equal


@pytest.mark.parametrize(("name", "pattern", "expected"), [
    ("admin_delete", "admin_*", True), ("run_dangerous", "*_dangerous", True), ("debug", "debug_*", False),
    ("get_weather", "get_weather", True), ("Get_weather", "get_weather", False), ("tool1", "tool?", True),
    ("", "*", True),
])
def test_globs_are_fnmatch_and_case_sensitive(name: str, pattern: str, expected: bool) -> None:
    assert matches(name, pattern) is expected


@pytest.mark.parametrize(("arguments", "expected"), [
    (None, {}), ("", {}), ("  ", {}), ({"city": "Paris"}, {"city": "Paris"}), ('{"city": "Paris"}', {"city": "Paris"}),
    ("[1, 2]", None), ("not json", None), (42, None), (["a"], None),
])
def test_arguments_of(arguments: Any, expected: dict[str, Any] | None) -> None:
    assert arguments_of(ToolCall("t", arguments)) == expected


@pytest.mark.parametrize(("left", "right", "equal"), [
    (1, 1.0, True), (True, 1, False), (False, 0, False), (True, True, True), ("1", 1, False), (None, None, True),
    ([1, {"a": 2}], (1, {"a": 2.0}), True), ({"a": 1}, {"a": 1, "b": 2}, False), ([1, 2], [2, 1], False),
    ({"a": [True]}, {"a": [1]}, False),
])
def test_json_equal(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


def test_argument_violations_subset_and_exact() -> None:
    expected = {"city": "Paris", "units": "C", "trace_id": "x"}
    actual = {"city": "Lyon", "trace_id": "y", "extra": 1}
    subset = argument_violations("r", "get_weather", 3, expected, actual, ignore_keys=frozenset({"trace_id"}))
    assert [(v["argument"], v["constraint"]) for v in subset] == [("city", "equals"), ("units", "required")]
    assert subset[0] == {"rule": "r", "tool": "get_weather", "index": 3, "argument": "city", "value": "Lyon",
                         "expected": "Paris", "constraint": "equals",
                         "message": 'get_weather (index 3): city = "Lyon", expected "Paris"'}
    exact = argument_violations("r", "get_weather", 3, expected, actual, exact=True,
                                ignore_keys=frozenset({"trace_id"}))
    assert [v["argument"] for v in exact] == ["city", "units", "extra"]


def test_align_is_a_longest_common_subsequence() -> None:
    # "abcbdab" vs "bdcaba": a classic LCS of length 4 (e.g. "bcba")
    pairs = align(list("abcbdab"), list("bdcaba"), str.__eq__)
    assert len(pairs) == 4
    assert all("abcbdab"[i] == "bdcaba"[j] for i, j in pairs)
    assert [i for i, _ in pairs] == sorted(i for i, _ in pairs) and [j for _, j in pairs] == sorted(j for _, j in pairs)
    assert align([], ["a"], str.__eq__) == [] and align(["a"], [], str.__eq__) == []
    assert align(["get_*", "send"], ["get_a", "x", "send"], lambda p, n: matches(n, p)) == [(0, 0), (1, 2)]


def test_violation_records_are_clipped_and_capped() -> None:
    long_text = "x" * 500
    record = violation("max", "msg", tool="t", value=long_text, expected={"k": long_text}, argument=long_text)
    assert list(record) == ["rule", "tool", "value", "expected", "argument", "message"]
    assert len(record["value"]) == 201 and record["value"].endswith("…")
    assert isinstance(record["expected"], str) and record["expected"].startswith('{"k": "xxx')
    assert record["argument"] == long_text  # only value/expected come from traces and get clipped
    assert clip([1, 2]) == [1, 2] and clip(None) is None
    many = [violation("r", f"m{i}") for i in range(MAX_VIOLATIONS + 5)]
    meta = violation_metadata(many)
    assert len(meta["violations"]) == MAX_VIOLATIONS and meta["violation_count"] == MAX_VIOLATIONS + 5
    assert with_violations("head", many[:5]) == "head: m0; m1; m2; and 2 more"
    assert with_violations("head", []) == "head"
