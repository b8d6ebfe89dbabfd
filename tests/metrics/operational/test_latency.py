from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.operational.latency import LatencyMetric


def value_of(latency_ms: float | None, **options: Any) -> float | None:
    score = LatencyMetric(options=options).measure(EvalCase(latency_ms=latency_ms))
    return None if score is None else score.value


def test_step_mode_passes_within_budget_and_fails_over_it() -> None:
    metric = LatencyMetric(options={"max_ms": 1000})
    ok = metric.measure(EvalCase(latency_ms=999.5))
    over = metric.measure(EvalCase(latency_ms=1000.1))
    assert ok is not None and ok.passed and ok.value == 1.0 and ok.dimension is Dimension.PERFORMANCE
    assert ok.metadata == {"latency_ms": 999.5, "max_ms": 1000.0}
    assert over is not None and not over.passed and over.value == 0.0
    assert over.reason == "latency 1000 ms is over the 1000 ms budget"
    assert value_of(1000, max_ms=1000) == 1.0  # the budget itself is within budget


@pytest.mark.parametrize("latency", [None, math.nan, math.inf])
def test_missing_latency_is_not_applicable(latency: float | None) -> None:
    assert value_of(latency, max_ms=1000) is None


def test_linear_mode_decays_from_target_to_max() -> None:
    options = {"max_ms": 3000, "target_ms": 1000, "mode": "linear"}
    assert value_of(0, **options) == 1.0
    assert value_of(1000, **options) == 1.0
    assert value_of(2000, **options) == pytest.approx(0.5)
    assert value_of(2500, **options) == pytest.approx(0.25)
    assert value_of(3000, **options) == 0.0
    assert value_of(10_000, **options) == 0.0
    assert value_of(1500, max_ms=2000, mode="linear") == pytest.approx(0.25)  # target_ms defaults to 0


def test_default_threshold_passes_linear_up_to_halfway() -> None:
    metric = LatencyMetric(options={"max_ms": 2000, "mode": "linear"})
    assert metric.threshold == 0.5
    first, second = metric.measure(EvalCase(latency_ms=1000)), metric.measure(EvalCase(latency_ms=1001))
    assert first is not None and first.passed and second is not None and not second.passed


def test_zero_and_negative_latency_are_within_budget() -> None:
    assert value_of(0, max_ms=1) == 1.0
    assert value_of(-5, max_ms=100, mode="linear") == 1.0  # clock skew


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"max_ms": 0},
        {"max_ms": -5},
        {"max_ms": "fast"},
        {"max_ms": 100, "mode": "exponential"},
        {"max_ms": 100, "target_ms": 100, "mode": "linear"},
        {"max_ms": 100, "target_ms": -1},
        {"max_ms": 100, "nope": 1},
    ],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LatencyMetric(options=options)
