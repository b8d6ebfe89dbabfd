from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.operational.retry_count import RetryCountMetric


def value_of(retries: int | None, **options: Any) -> float | None:
    score = RetryCountMetric(options=options).measure(EvalCase(retry_count=retries))
    return None if score is None else score.value


def test_no_retries_pass_by_default() -> None:
    score = RetryCountMetric().measure(EvalCase(retry_count=0))
    assert score is not None and score.passed and score.value == 1.0 and score.dimension is Dimension.PERFORMANCE
    assert score.reason == "0 retries, within the limit of 0"
    assert score.metadata == {"retry_count": 0, "max_retries": 0}


def test_excess_is_graded_down() -> None:
    # value = 1 / (1 + excess): 1 over -> 1/2, 2 over -> 1/3, 3 over -> 1/4
    assert value_of(1) == pytest.approx(0.5)
    assert value_of(2) == pytest.approx(1 / 3)
    assert value_of(5, max_retries=2) == pytest.approx(0.25)
    score = RetryCountMetric().measure(EvalCase(retry_count=1))
    assert score is not None and not score.passed and score.reason == "1 retry, 1 over the limit of 0"


def test_within_the_limit() -> None:
    assert value_of(2, max_retries=2) == 1.0
    assert value_of(1, max_retries=3) == 1.0


@pytest.mark.parametrize("retries", [None, -1])
def test_missing_or_negative_count_is_not_applicable(retries: int | None) -> None:
    assert value_of(retries) is None


@pytest.mark.parametrize("options", [{"max_retries": -1}, {"max_retries": "two"}, {"extra": 1}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RetryCountMetric(options=options)
