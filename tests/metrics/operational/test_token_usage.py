from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.operational.token_usage import TokenUsageMetric


def value_of(case: EvalCase, **options: Any) -> float | None:
    score = TokenUsageMetric(options=options).measure(case)
    return None if score is None else score.value


def test_step_mode() -> None:
    metric = TokenUsageMetric(options={"max_tokens": 100})
    ok, over = metric.measure(EvalCase(token_count=100)), metric.measure(EvalCase(token_count=101))
    assert ok is not None and ok.passed and ok.value == 1.0 and ok.dimension is Dimension.PERFORMANCE
    assert ok.metadata == {"token_count": 100, "max_tokens": 100}
    assert over is not None and not over.passed and over.value == 0.0
    assert over.reason == "101 tokens is over the budget of 100"


def test_missing_token_count_is_not_applicable() -> None:
    assert value_of(EvalCase(), max_tokens=100) is None


def test_falls_back_to_input_plus_output_tokens() -> None:
    assert value_of(EvalCase(input_tokens=60, output_tokens=50), max_tokens=100) == 0.0
    assert value_of(EvalCase(input_tokens=60), max_tokens=100) == 1.0
    assert value_of(EvalCase(token_count=10, input_tokens=600), max_tokens=100) == 1.0  # token_count wins


def test_zero_tokens() -> None:
    assert value_of(EvalCase(token_count=0), max_tokens=1) == 1.0


def test_linear_mode() -> None:
    options = {"max_tokens": 300, "target_tokens": 100, "mode": "linear"}
    assert value_of(EvalCase(token_count=100), **options) == 1.0
    assert value_of(EvalCase(token_count=200), **options) == pytest.approx(0.5)
    assert value_of(EvalCase(token_count=300), **options) == 0.0
    assert value_of(EvalCase(token_count=5000), **options) == 0.0


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"max_tokens": 0},
        {"max_tokens": 1.5},
        {"max_tokens": 100, "mode": "log"},
        {"max_tokens": 100, "target_tokens": 200},
        {"max_tokens": 100, "extra": True},
    ],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TokenUsageMetric(options=options)
