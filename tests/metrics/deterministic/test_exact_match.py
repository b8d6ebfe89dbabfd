from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.deterministic.exact_match import ExactMatchMetric


def measure(output: Any, expected: Any, **options: Any) -> float | None:
    score = ExactMatchMetric(options=options).measure(EvalCase(output=output, expected=expected))
    return None if score is None else score.value


def test_equal_text_passes_and_different_text_fails() -> None:
    metric = ExactMatchMetric()
    score = metric.measure(EvalCase(output="Paris", expected="Paris"))
    assert score is not None and score.passed and score.value == 1.0
    assert score.dimension is Dimension.CORRECTNESS and score.name == "exact_match"
    score = metric.measure(EvalCase(output="Paris.", expected="Paris"))
    assert score is not None and not score.passed and score.value == 0.0
    assert score.reason is not None and "character 5" in score.reason


@pytest.mark.parametrize(("output", "expected"), [(None, "Paris"), ("Paris", None), (None, None)])
def test_missing_output_or_expected_is_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


def test_case_sensitivity() -> None:
    assert measure("paris", "Paris") == 0.0
    assert measure("paris", "Paris", case_sensitive=False) == 1.0
    assert measure("STRASSE", "straße", case_sensitive=False) == 1.0  # casefold, not lower


def test_whitespace_options() -> None:
    assert measure("  Paris\n", "Paris") == 1.0
    assert measure("  Paris\n", "Paris", strip_whitespace=False) == 0.0
    assert measure("New   York\ncity", "New York city") == 0.0
    assert measure("  New   York\ncity ", "New York city", normalize=True) == 1.0


def test_unicode() -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert measure(composed, composed) == 1.0
    assert measure(composed, decomposed) == 0.0
    assert measure(composed, decomposed, normalize=True) == 1.0
    assert measure("東京 🗼", "東京 🗼") == 1.0


def test_empty_strings_are_values_not_missing() -> None:
    assert measure("", "") == 1.0
    assert measure("   ", "") == 1.0
    assert measure("", "Paris") == 0.0


def test_structured_values_compare_by_value() -> None:
    assert measure({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}) == 1.0
    assert measure({"a": 1}, {"a": 2}) == 0.0
    assert measure([1, 2], (1, 2)) == 1.0
    assert measure('{"b": 2, "a": 1}', {"a": 1, "b": 2}) == 1.0
    assert measure({"a": 1}, ' {"a": 1} ') == 1.0
    assert measure("42", 42) == 1.0


def test_structured_edge_cases() -> None:
    assert measure(True, 1) == 0.0
    assert measure({"ok": True}, {"ok": 1}) == 0.0
    assert measure([1, 2], [2, 1]) == 0.0
    assert measure({"a": [1]}, {"a": 1}) == 0.0
    score = ExactMatchMetric().measure(EvalCase(output="not json", expected={"a": 1}))
    assert score is not None and score.value == 0.0 and score.reason is not None and "not valid JSON" in score.reason


@pytest.mark.parametrize("options", [{"case_sensitive": "maybe"}, {"unknown": True}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ExactMatchMetric(options=options)
