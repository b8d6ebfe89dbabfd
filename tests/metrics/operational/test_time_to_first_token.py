from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.operational.time_to_first_token import TimeToFirstTokenMetric


def value_of(ttft: Any, **options: Any) -> float | None:
    case = EvalCase(metadata={} if ttft is None else {"time_to_first_token_ms": ttft})
    score = TimeToFirstTokenMetric(options=options).measure(case)
    return None if score is None else score.value


def test_step_mode() -> None:
    metric = TimeToFirstTokenMetric(options={"max_ms": 500})
    ok = metric.measure(EvalCase(metadata={"time_to_first_token_ms": 420}))
    assert ok is not None and ok.passed and ok.value == 1.0 and ok.dimension is Dimension.PERFORMANCE
    assert ok.reason == "time to first token 420 ms is within the 500 ms budget"
    assert ok.metadata == {"time_to_first_token_ms": 420.0, "max_ms": 500.0}
    assert value_of(500.1, max_ms=500) == 0.0


def test_linear_mode() -> None:
    # 750 ms between target 500 and max 1000: 1 - (750 - 500) / (1000 - 500) = 0.5
    assert value_of(750, max_ms=1000, target_ms=500, mode="linear") == pytest.approx(0.5)
    assert value_of(400, max_ms=1000, target_ms=500, mode="linear") == 1.0


@pytest.mark.parametrize("ttft", [None, "fast", True, math.nan, math.inf])
def test_missing_or_unusable_value_is_not_applicable(ttft: Any) -> None:
    assert value_of(ttft, max_ms=500) is None


@pytest.mark.parametrize("options", [{}, {"max_ms": 0}, {"max_ms": 100, "target_ms": 100}, {"max_ms": 1, "x": 1}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TimeToFirstTokenMetric(options=options)
