from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.deterministic.regex import RegexMetric, RegexOptions


def value_of(output: Any, **options: Any) -> float | None:
    score = RegexMetric(options=options).measure(EvalCase(output=output))
    return None if score is None else score.value


def test_search_passes_on_a_match_and_fails_otherwise() -> None:
    score = RegexMetric(options={"pattern": r"\bParis\b"}).measure(EvalCase(output="It is Paris."))
    assert score is not None and score.passed and score.reason == "pattern matched 'Paris' at character 6"
    assert score.metadata == {"matched": True, "truncated": False}
    assert value_of("It is Lyon.", pattern=r"\bParis\b") == 0.0


def test_missing_output_is_not_applicable() -> None:
    assert value_of(None, pattern="x") is None


def test_empty_output() -> None:
    assert value_of("", pattern="x") == 0.0
    assert value_of("", pattern="^$", mode="fullmatch") == 1.0


def test_fullmatch_mode() -> None:
    assert value_of("2024-01-31", pattern=r"\d{4}-\d{2}-\d{2}", mode="fullmatch") == 1.0
    assert value_of("on 2024-01-31", pattern=r"\d{4}-\d{2}-\d{2}", mode="fullmatch") == 0.0
    assert value_of("on 2024-01-31", pattern=r"\d{4}-\d{2}-\d{2}") == 1.0


def test_negate_passes_when_the_pattern_does_not_match() -> None:
    options = {"pattern": r"\b(sorry|apologi[sz]e)\b", "flags": ["IGNORECASE"], "negate": True}
    metric = RegexMetric(options=options)
    ok = metric.measure(EvalCase(output="Here is the answer."))
    bad = metric.measure(EvalCase(output="Sorry, I cannot help."))
    assert ok is not None and ok.passed and ok.reason is not None and ok.reason.startswith("as required")
    assert bad is not None and not bad.passed and bad.reason is not None and "must not match" in bad.reason


def test_flags() -> None:
    assert value_of("PARIS", pattern="paris") == 0.0
    assert value_of("PARIS", pattern="paris", flags=["IGNORECASE"]) == 1.0
    assert value_of("PARIS", pattern="paris", flags=["ignorecase"]) == 1.0  # names are case-insensitive
    assert value_of("a\nb", pattern="^b$") == 0.0
    assert value_of("a\nb", pattern="^b$", flags=["MULTILINE"]) == 1.0
    assert value_of("a\nb", pattern="a.b", flags=["DOTALL"]) == 1.0
    assert value_of("ab", pattern="a  b  # spaced out", flags=["VERBOSE"]) == 1.0


def test_verbose_flag_is_used_when_validating_the_pattern() -> None:
    RegexOptions.model_validate({"pattern": "a #(", "flags": ["VERBOSE"]})  # "(" is in a comment
    with pytest.raises(ValidationError):
        RegexOptions.model_validate({"pattern": "a #("})


def test_unicode_and_structured_output() -> None:
    assert value_of("東京タワー", pattern=r"^\w+$") == 1.0
    assert value_of({"city": "Zürich"}, pattern='"city": "Zürich"') == 1.0


def test_only_the_first_max_chars_are_searched() -> None:
    text = "a" * 200 + "needle"
    assert value_of(text, pattern="needle") == 1.0
    score = RegexMetric(options={"pattern": "needle", "max_chars": 100}).measure(EvalCase(output=text))
    assert score is not None and score.value == 0.0 and score.metadata["truncated"] is True
    assert score.reason is not None and "first 100 characters" in score.reason


def test_a_huge_output_is_bounded_by_the_default_max_chars() -> None:
    score = RegexMetric(options={"pattern": "x$"}).measure(EvalCase(output="a" * 1_000_000 + "x"))
    assert score is not None and score.value == 0.0 and score.metadata["truncated"] is True


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"pattern": "("},
        {"pattern": "[a-"},
        {"pattern": "x", "flags": ["NOPE"]},
        {"pattern": "x", "flags": "IGNORECASE"},
        {"pattern": "x", "mode": "match"},
        {"pattern": "x", "max_chars": 0},
        {"pattern": "x", "unknown": 1},
    ],
)
def test_invalid_options_are_validation_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RegexOptions.model_validate(options)


def test_invalid_pattern_error_names_the_pattern_field() -> None:
    with pytest.raises(ValidationError) as info:
        RegexOptions.model_validate({"pattern": "(unclosed"})
    (error,) = info.value.errors()
    assert error["loc"] == ("pattern",) and "invalid regular expression" in error["msg"]
