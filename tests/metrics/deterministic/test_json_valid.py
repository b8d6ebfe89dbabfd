from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.deterministic.json_valid import JsonValidMetric
from evald.metrics.deterministic.json_values import STRICT_DECODER


def value_of(output: Any, **options: Any) -> float | None:
    score = JsonValidMetric(options=options).measure(EvalCase(output=output))
    return None if score is None else score.value


@pytest.mark.parametrize("output", ['{"a": 1}', "[1, 2]", '"text"', "42", "true", "null", '  {"k": "東京"}\n'])
def test_valid_json_passes(output: str) -> None:
    assert value_of(output) == 1.0


@pytest.mark.parametrize("output", ["", "   ", "{", "{'a': 1}", '{"a": 1,}', "NaN", '{"a": Infinity}', "Paris"])
def test_invalid_json_fails(output: str) -> None:
    assert value_of(output) == 0.0


def test_reason_locates_the_parse_error() -> None:
    score = JsonValidMetric().measure(EvalCase(output='{\n  "a": 1,\n}'))
    assert score is not None and not score.passed
    assert score.reason is not None and "line 3 column 1" in score.reason


@pytest.mark.parametrize("output", ["The capital of France is Paris.", "  \n\n  Hello", "\r\n\tX", "Ünïcode", "<a/>",
                                    "'single'", "", " ", "nope", "tru", "-", "{", "NaN", "Infinity", "Nope",
                                    "\n\n  * bullet"])
def test_prose_is_refused_with_the_decoders_own_reason(output: str) -> None:
    """Text no JSON value can start with is decided without parsing; the reason is the one the decoder gives."""
    try:
        STRICT_DECODER.decode(output)
    except json.JSONDecodeError as err:
        expected = f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
    except ValueError as err:
        expected = f"not valid JSON: {err}"
    score = JsonValidMetric().measure(EvalCase(output=output))
    assert score is not None and score.value == 0.0 and score.reason == expected


def test_missing_output_is_not_applicable() -> None:
    assert value_of(None) is None


def test_structured_outputs_are_already_valid() -> None:
    assert value_of({"a": 1}) == 1.0
    assert value_of([1, 2]) == 1.0
    assert value_of([1, 2], require_object=True) == 0.0


def test_require_object() -> None:
    assert value_of('{"a": 1}', require_object=True) == 1.0
    score = JsonValidMetric(options={"require_object": True}).measure(EvalCase(output="[1]"))
    assert score is not None and score.value == 0.0 and score.reason is not None and "an array" in score.reason
    assert value_of('"{}"', require_object=True) == 0.0


def test_deeply_nested_input_does_not_crash() -> None:
    assert value_of("[" * 100_000 + "]" * 100_000) in (0.0, 1.0)


@pytest.mark.parametrize("options", [{"require_object": "sometimes"}, {"strict": True}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        JsonValidMetric(options=options)
