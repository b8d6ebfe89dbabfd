from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.deterministic.numeric_diff import NumericDiffMetric


def measure(output: Any, expected: Any = None, **options: Any) -> Score | None:
    return NumericDiffMetric(options=options).measure(EvalCase(output=output, expected=expected))


def value_of(output: Any, expected: Any = None, **options: Any) -> float:
    score = measure(output, expected, **options)
    assert score is not None
    return score.value


def test_equal_numbers_pass() -> None:
    score = measure(42, 42)
    assert score is not None and score.passed and score.value == 1.0
    assert score.metadata == {"actual": 42.0, "expected": 42.0, "diff": 0.0, "within_tolerance": True}


def test_a_different_number_fails_in_binary_mode() -> None:
    score = measure("41", 42)
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "41 differs from 42 by -1"


@pytest.mark.parametrize(
    ("output", "expected", "wanted"),
    [
        ("1,234.5", 1234.5, 1.0),  # thousands separators
        (" -3 ", "-3", 1.0),  # numeric string expected
        (".5", 0.5, 1.0),
        ("2.5e3", "2500", 1.0),
        (3, 3.0, 1.0),
    ],
)
def test_numbers_and_numeric_strings(output: Any, expected: Any, wanted: float) -> None:
    assert value_of(output, expected) == wanted


def test_extracts_the_last_number_by_default_and_the_first_on_request() -> None:
    text = "Step 1: 6 * 7 = 42. The answer is 42, not 24."
    assert value_of(text, 24) == 1.0  # last numeric token
    assert value_of(text, 1, extract="first") == 1.0
    assert value_of("The total is $1,250 (about 1.3k)", 1250, extract="first") == 1.0
    assert value_of("range 3-5", 5) == 1.0  # "3-5" is 3 and 5, not -5


def test_absolute_and_relative_tolerance_follow_math_isclose() -> None:
    assert value_of("3.14", 3.14159, abs_tol=0.01) == 1.0  # |diff| = 0.00159 <= 0.01
    assert value_of("3.14", 3.14159, abs_tol=0.001) == 0.0
    assert value_of("105", 100, rel_tol=0.05) == 1.0  # 5 <= 0.05 * max(105, 100) = 5.25
    assert value_of("106", 100, rel_tol=0.05) == 0.0  # 6 > 0.05 * 106 = 5.3


def test_graded_mode_hand_computed() -> None:
    # default scale = |expected| = 80: 1 - |90 - 80| / 80 = 1 - 0.125 = 0.875
    assert value_of("90", 80, mode="graded") == pytest.approx(0.875)
    # explicit scale 40: 1 - 10 / 40 = 0.75
    assert value_of("90", 80, mode="graded", scale=40) == pytest.approx(0.75)
    # expected 0 -> scale 1: 1 - 0.25 / 1 = 0.75
    assert value_of("-0.25", 0, mode="graded") == pytest.approx(0.75)
    # far away: clamped at 0
    assert value_of("1000", 80, mode="graded") == 0.0
    # within tolerance is 1 even when graded
    assert value_of("80.4", 80, mode="graded", abs_tol=0.5) == 1.0


def test_expected_option_wins_over_the_case() -> None:
    def with_option(case_expected: Any) -> Score | None:
        return NumericDiffMetric(options={"expected": 7}).measure(EvalCase(output="7", expected=case_expected))

    assert (s := with_option(9)) is not None and s.value == 1.0
    assert (s := with_option(None)) is not None and s.value == 1.0


@pytest.mark.parametrize("expected", [None, "about seven", "", [7], {"n": 7}, True, "nan", float("inf")])
def test_no_expected_number_is_not_applicable(expected: Any) -> None:
    assert measure("7", expected) is None


@pytest.mark.parametrize("output", [None, "no digits here", "v2 of H2O", True, {"n": 7}, "1e999"])
def test_no_number_in_the_output_is_not_applicable_by_default(output: Any) -> None:
    assert measure(output, 7) is None


def test_no_number_fail_scores_zero() -> None:
    score = measure("I don't know", 7, no_number="fail")
    assert score is not None and score.value == 0.0 and score.reason == "the output holds no number"
    assert measure(None, 7, no_number="fail") is None  # a missing output is still not applicable


@pytest.mark.parametrize(
    "options",
    [{"abs_tol": -1}, {"mode": "fuzzy"}, {"scale": 0}, {"extract": "middle"}, {"no_number": "zero"}, {"tol": 1},
     {"expected": float("nan")}, {"rel_tol": float("inf")}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        NumericDiffMetric(options=options)
