from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.similarity.levenshtein import LevenshteinMetric


def measure(output: Any, expected: Any, **options: Any) -> Score | None:
    return LevenshteinMetric(options=options).measure(EvalCase(output=output, expected=expected))


def value_of(output: Any, expected: Any, **options: Any) -> float:
    score = measure(output, expected, **options)
    assert score is not None
    return score.value


def test_identical_text_scores_one() -> None:
    score = measure("The capital is Paris.", "The capital is Paris.")
    assert score is not None and score.value == 1.0 and score.passed
    assert score.metadata == {"distance": 0, "reference_index": 0}


def test_hand_computed_values() -> None:
    # kitten -> sitting: k->s, e->i, insert g = 3 edits over max length 7: 1 - 3/7 = 0.5714
    score = measure("kitten", "sitting")
    assert score is not None and score.value == pytest.approx(1 - 3 / 7) and not score.passed
    assert score.reason == "edit distance 3 over 7 character(s): similarity 0.571"
    # flaw -> lawn: delete f, insert n = 2 edits over 4: 0.5
    assert value_of("flaw", "lawn") == pytest.approx(0.5)


def test_one_typo_in_a_word_passes_the_default_threshold() -> None:
    # Paris vs Pariss: 1 insert over 6 = 0.833 >= 0.8
    assert (s := measure("Pariss", "Paris")) is not None and s.value == pytest.approx(5 / 6) and s.passed


def test_case_sensitivity_option() -> None:
    assert value_of("PARIS", "paris") == 0.0  # 5 substitutions over 5
    assert value_of("Paris", "paris") == pytest.approx(0.8)  # 1 substitution over 5
    assert value_of("PARIS", "paris", case_sensitive=False) == 1.0


def test_whitespace_normalisation_option() -> None:
    assert value_of("  hello   world \n", "hello world") == 1.0
    # without it: 16 characters vs 11, 5 deletions: 1 - 5/16 = 0.6875
    assert value_of("  hello   world ", "hello world", normalize_whitespace=False) == pytest.approx(0.6875)


def test_best_of_several_references() -> None:
    score = measure("colour", ["shade", "color", "colour"])
    assert score is not None and score.value == 1.0 and score.metadata["reference_index"] == 2
    assert score.reason is not None and score.reason.endswith("(best of 3 references)")


def test_structured_values_compare_as_json_text() -> None:
    assert value_of({"a": 1}, '{"a": 1}') == 1.0
    assert value_of(42, 42) == 1.0


def test_empty_texts() -> None:
    assert value_of("", "") == 1.0
    assert value_of("", "abc") == 0.0


def test_unicode_is_nfc_normalised() -> None:
    assert value_of("cafe\u0301", "caf\u00e9") == 1.0


@pytest.mark.parametrize(("output", "expected"), [(None, "a"), ("a", None), ("a", []), ("a", [None])])
def test_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


@pytest.mark.parametrize("options", [{"case_sensitive": "maybe"}, {"ignore_case": True}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LevenshteinMetric(options=options)
