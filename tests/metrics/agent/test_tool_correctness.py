from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evald.case import Dimension
from evald.metrics.agent.tool_correctness import ToolCorrectnessMetric

from .helpers import measure, rules_of, trajectory

# E = [search, fetch], A = [search, search, summarize]
CASE = trajectory("search", "search", "summarize", expected_tools=("search", "fetch"))


def value(case: Any = CASE, **options: Any) -> float:
    return measure(ToolCorrectnessMetric(options=options), case).value


def test_hand_computed_values_per_mode() -> None:
    assert value(mode="subset") == 0.5  # |A ∩ E| / |E| = |{search}| / 2 = 1/2 ("fetch" never called)
    assert value(mode="superset") == pytest.approx(2 / 3)  # calls in {search, fetch}: 2 of 3
    assert value(mode="exact") == pytest.approx(1 / 3)  # |A ∩ E| / max(3, 2) = 1/3 (multiset: one search)


def test_perfect_match_passes_in_every_mode() -> None:
    case = trajectory("get_weather", "send_email", expected_tools=("get_weather", "send_email"))
    for mode in ("subset", "superset", "exact"):
        score = measure(ToolCorrectnessMetric(options={"mode": mode}), case)
        assert score.value == 1.0 and score.passed and score.dimension is Dimension.TRAJECTORY
        assert score.metadata["violations"] == [] and score.metadata["violation_count"] == 0


def test_subset_is_the_default_and_reports_missing_tools() -> None:
    score = measure(ToolCorrectnessMetric(), CASE)
    assert score.metadata["mode"] == "subset" and not score.passed
    assert score.metadata["violations"] == [{"rule": "missing_tool", "tool": "fetch", "expected": 1, "value": 0,
                                             "message": "fetch expected 1 time(s), called 0"}]
    assert score.reason == "subset: 1 matched; 3 call(s), 2 expected: fetch expected 1 time(s), called 0"


def test_a_tool_expected_twice_must_be_called_twice() -> None:
    case = trajectory("search", expected_tools=("search", "search"))
    assert value(case) == 0.5  # 1 of the 2 expected search calls


def test_exact_reports_missing_and_unexpected_calls() -> None:
    score = measure(ToolCorrectnessMetric(options={"mode": "exact"}), CASE)
    assert rules_of(score) == ["missing_tool", "unexpected_tool", "unexpected_tool"]
    assert [v.get("index") for v in score.metadata["violations"]] == [None, 1, 2]  # the second search is extra


def test_ordered_uses_the_longest_common_subsequence() -> None:
    case = trajectory("fetch", "search", "summarize", expected_tools=("search", "fetch", "summarize"))
    assert value(case, mode="exact") == 1.0  # same multiset
    # LCS(fetch search summarize, search fetch summarize) = 2 (e.g. search, summarize): 2 / max(3, 3)
    assert value(case, mode="exact", ordered=True) == pytest.approx(2 / 3)
    assert value(case, mode="subset", ordered=True) == pytest.approx(2 / 3)  # 2 / |E|
    score = measure(ToolCorrectnessMetric(options={"mode": "subset", "ordered": True}), case)
    assert rules_of(score) == ["out_of_order"]
    assert value(trajectory("a", "x", "b", expected_tools=("a", "b")), mode="subset", ordered=True) == 1.0


def test_option_wins_over_the_case_and_empty_means_no_tool_expected() -> None:
    assert value(CASE, expected_tools=["search", "summarize"]) == 1.0
    assert value(trajectory(expected_tools=()), mode="exact") == 1.0  # nothing expected, nothing called
    assert value(trajectory("search", expected_tools=()), mode="exact") == 0.0  # 0 / max(1, 0)
    assert value(trajectory("search", expected_tools=()), mode="subset") == 1.0  # nothing to cover


def test_empty_trajectory() -> None:
    empty = trajectory(expected_tools=("search",))
    assert value(empty, mode="subset") == 0.0
    assert value(empty, mode="superset") == 1.0  # no call outside the expected set
    assert value(empty, mode="exact") == 0.0


def test_not_applicable_without_expected_tools() -> None:
    assert ToolCorrectnessMetric().measure(trajectory("search")) is None


def test_ordered_superset_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="ordered"):
        ToolCorrectnessMetric(options={"mode": "superset", "ordered": True})
    with pytest.raises(ValidationError):
        ToolCorrectnessMetric(options={"mode": "fuzzy"})


_NAMES = st.lists(st.sampled_from(["search", "fetch", "summarize", "email"]), max_size=6)


@settings(max_examples=300, deadline=None)
@given(called=_NAMES, expected=_NAMES, mode=st.sampled_from(["subset", "exact"]))
def test_unordered_modes_follow_the_multiset_definitions(called: list[str], expected: list[str], mode: str) -> None:
    """The documented formulas, computed with collections.Counter: |A ∩ E| over |E| (subset) or max(|A|, |E|)
    (exact); a missing_tool violation per expected tool called too few times, and in exact mode an
    unexpected_tool violation per call beyond its tool's expected count (the later calls)."""
    score = measure(ToolCorrectnessMetric(options={"mode": mode}), trajectory(*called, expected_tools=tuple(expected)))
    want, have = Counter(expected), Counter(called)
    matched = sum((want & have).values())
    denominator = len(expected) if mode == "subset" else max(len(called), len(expected))
    assert score.value == (matched / denominator if denominator else 1.0)
    assert score.metadata["matched"] == matched
    missing = [(v["tool"], v["expected"], v["value"]) for v in score.metadata["violations"]
               if v["rule"] == "missing_tool"]
    assert missing == [(name, n, have[name]) for name, n in want.items() if have[name] < n]
    seen: Counter[str] = Counter()
    beyond = []
    for index, name in enumerate(called):
        seen[name] += 1
        if seen[name] > want[name]:
            beyond.append(index)
    unexpected = [v["index"] for v in score.metadata["violations"] if v["rule"] == "unexpected_tool"]
    assert unexpected == (beyond if mode == "exact" else [])
