from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.deterministic.contains import ContainsMetric


def score_of(output: Any, expected: Any = None, **options: Any) -> tuple[float, str] | None:
    score = ContainsMetric(options=options).measure(EvalCase(output=output, expected=expected))
    return None if score is None else (score.value, score.reason or "")


def test_all_values_found_passes() -> None:
    assert score_of("The capital of France is Paris.", values=["Paris", "France"]) == (1.0, "all 2 value(s) found")


def test_mode_all_scores_the_fraction_and_lists_missing_values() -> None:
    result = score_of("Paris is in France", values=["Paris", "Lyon", "Nice", "France"])
    assert result is not None
    value, reason = result
    assert value == 0.5
    assert "'Lyon'" in reason and "'Nice'" in reason and "'Paris'" not in reason
    score = ContainsMetric(options={"values": ["Paris", "Lyon"]}).measure(EvalCase(output="Paris"))
    assert score is not None and not score.passed and score.metadata == {"found": 1, "total": 2, "mode": "all"}


def test_mode_any() -> None:
    assert score_of("I think Lyon", values=["Paris", "Lyon"], mode="any") == (1.0, "1 of 2 found; missing: 'Paris'")
    result = score_of("Marseille", values=["Paris", "Lyon"], mode="any")
    assert result is not None and result[0] == 0.0


def test_case_insensitive_by_default() -> None:
    assert score_of("PARIS", values=["paris"]) == (1.0, "all 1 value(s) found")
    result = score_of("PARIS", values=["paris"], case_sensitive=True)
    assert result is not None and result[0] == 0.0


def test_missing_output_is_not_applicable() -> None:
    assert score_of(None, values=["Paris"]) is None


def test_empty_output_is_a_value() -> None:
    result = score_of("", values=["Paris"])
    assert result is not None and result[0] == 0.0


def test_uses_expected_when_no_values_are_configured() -> None:
    assert score_of("Paris, France", expected="Paris") == (1.0, "all 1 value(s) found")
    result = score_of("Paris", expected=["Paris", "France"])
    assert result is not None and result[0] == 0.5
    assert score_of("Paris", expected=("Paris",)) == (1.0, "all 1 value(s) found")
    assert score_of("Paris", expected="Lyon", values=["Paris"]) == (1.0, "all 1 value(s) found")  # values win


@pytest.mark.parametrize("expected", [None, "", [], [""], {"a": 1}, [1, 2]])
def test_nothing_to_look_for_is_not_applicable(expected: Any) -> None:
    assert score_of("Paris", expected=expected) is None


def test_unicode() -> None:
    assert score_of("Ich wohne in der Hauptstraße", values=["HAUPTSTRASSE"]) == (1.0, "all 1 value(s) found")
    assert score_of("un cafe\u0301 noir", values=["caf\u00e9"]) == (1.0, "all 1 value(s) found")  # NFC
    assert score_of("東京タワー 🗼", values=["🗼", "東京"]) == (1.0, "all 2 value(s) found")


def test_structured_output_is_searched_as_json_text() -> None:
    assert score_of({"city": "Paris", "country": "France"}, values=["Paris"]) == (1.0, "all 1 value(s) found")
    assert score_of({"city": "東京"}, values=["東京"]) == (1.0, "all 1 value(s) found")  # not \\u-escaped
    result = score_of([1, 2, 3], values=["4"])
    assert result is not None and result[0] == 0.0


def test_many_missing_values_are_truncated_in_the_reason() -> None:
    result = score_of("nothing", values=[f"v{i}" for i in range(8)])
    assert result is not None and result[1].endswith("and 3 more")


@pytest.mark.parametrize(
    "options", [{"values": [""]}, {"values": "Paris"}, {"mode": "some"}, {"values": ["a"], "extra": 1}]
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ContainsMetric(options=options)
