from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.deterministic.list_contains import ListContainsMetric, as_items


def measure(output: Any, expected: Any = None, **options: Any) -> Score | None:
    return ListContainsMetric(options=options).measure(EvalCase(output=output, expected=expected))


def test_all_items_found_passes() -> None:
    score = measure(["Paris", "Lyon", "Nice"], ["Nice", "Paris"])
    assert score is not None and score.passed and score.value == 1.0
    assert score.reason == "all 2 item(s) found"


def test_share_found_hand_computed() -> None:
    # 2 of the 3 expected items are in the output: 2 / 3
    score = measure('["paris", "lyon"]', expected=["Paris", "Lyon", "Marseille"])
    assert score is not None and score.value == pytest.approx(2 / 3) and not score.passed
    assert score.reason == "2 of 3 found; missing: 'marseille'"
    assert score.metadata == {"found": 2, "total": 3, "mode": "all", "missing": ["marseille"]}


def test_items_are_compared_whole_not_as_substrings() -> None:
    score = measure(["Parisian"], ["Paris"])
    assert score is not None and score.value == 0.0


def test_mode_any() -> None:
    assert (s := measure("apples, pears", items=["pears", "plums"], mode="any")) is not None and s.value == 1.0
    assert (s := measure("apples, pears", items=["kiwis", "plums"], mode="any")) is not None and s.value == 0.0


def test_case_folding_is_the_default() -> None:
    assert (s := measure(["STRASSE"], ["straße"])) is not None and s.value == 1.0  # casefold
    assert (s := measure(["PARIS"], ["paris"], case_sensitive=True)) is not None and s.value == 0.0


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ('["a", "b", 3]', ["a", "b", "3"]),  # JSON array
        ("a, b ,c", ["a", " b ", "c"]),  # comma-separated
        ("- a, with comma\n* b\n\n1. c\n2) d", ["a, with comma", "b", "c", "d"]),  # lines, markers removed
        ("single", ["single"]),
        ('{"a": 1}', ['{"a": 1}']),  # a JSON object is not a list: one comma-free item
    ],
)
def test_output_text_is_read_as_a_list(text: str, items: list[str]) -> None:
    assert as_items(text) == items


def test_items_option_wins_and_expected_may_be_text_or_numbers() -> None:
    assert (s := measure(["x"], ["y"], items=["x"])) is not None and s.value == 1.0
    assert (s := measure("red\ngreen\nblue", "green, blue")) is not None and s.value == 1.0
    assert (s := measure([1, 2, 3], [3, 4])) is not None and s.value == 0.5  # 1 of 2: "3" found, "4" not


def test_duplicate_expected_items_count_once() -> None:
    assert (s := measure(["a"], ["a", "A", "b"])) is not None and s.value == 0.5 and s.metadata["total"] == 2


def test_empty_output_list_scores_zero() -> None:
    assert (s := measure([], ["a"])) is not None and s.value == 0.0
    assert (s := measure("", ["a"])) is not None and s.value == 0.0


@pytest.mark.parametrize("expected", [None, [], "", ["", "  "]])
def test_nothing_expected_is_not_applicable(expected: Any) -> None:
    assert measure(["a"], expected) is None


def test_missing_output_is_not_applicable() -> None:
    assert measure(None, ["a"]) is None


def test_many_missing_items_are_capped_in_the_reason() -> None:
    score = measure(["z"], [f"item{i}" for i in range(8)])
    assert score is not None and score.reason is not None and score.reason.endswith("and 3 more")
    assert len(score.metadata["missing"]) == 5


@pytest.mark.parametrize("options", [{"items": [""]}, {"mode": "most"}, {"items": "a"}, {"values": ["a"]}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ListContainsMetric(options=options)
