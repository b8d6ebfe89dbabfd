"""Calibration (ECE), discrimination (AUC-ROC) and the Brier score over (confidence, outcome) pairs: hand-computed
values and harness-evals' measure_dataset on the same pairs (tolerance 1e-9)."""

from __future__ import annotations

import pytest
from harness_evals import EvalCase as HEvalCase
from harness_evals.metrics.reliability import BrierScoreMetric as HBrier
from harness_evals.metrics.reliability import CalibrationMetric as HCalibration
from harness_evals.metrics.reliability import DiscriminationMetric as HDiscrimination

from evald.metrics.predictability.calibration import CalibrationMetric
from evald.metrics.predictability.discrimination import DiscriminationMetric
from evald.metrics.reliability.brier_score import BrierScoreMetric


def _theirs(metric: object, pairs: list[tuple[float, bool]]) -> float:
    cases = [HEvalCase(input="", output="", confidence=c) for c, _ in pairs]
    return float(metric.measure_dataset(cases, [y for _, y in pairs]).value)  # type: ignore[attr-defined]


def test_calibration() -> None:
    pairs = [(0.95, True), (0.95, False), (0.15, False), (0.15, False)]
    score = CalibrationMetric().measure_pairs(pairs)
    assert score is not None and score.value == pytest.approx(0.7)
    assert score.value == pytest.approx(_theirs(HCalibration(), pairs), abs=1e-9)
    five = CalibrationMetric(options={"n_bins": 5}).measure_pairs([(1.0, True), (0.5, True)])
    assert five is not None and five.value == pytest.approx(1 - 0.25)  # bin [0.4, 0.6): |1 - 0.5| * 1/2


def test_discrimination() -> None:
    pairs = [(0.9, True), (0.6, True), (0.7, False), (0.2, False)]
    score = DiscriminationMetric().measure_pairs(pairs)
    assert score is not None and score.value == pytest.approx(0.75)
    assert score.value == pytest.approx(_theirs(HDiscrimination(), pairs), abs=1e-9)
    ties = DiscriminationMetric().measure_pairs([(0.5, True), (0.5, False)])
    assert ties is not None and ties.value == pytest.approx(0.5)
    assert DiscriminationMetric().measure_pairs([(0.5, True), (0.9, True)]) is None


def test_brier_score() -> None:
    pairs = [(0.9, True), (0.2, False), (0.6, False)]
    score = BrierScoreMetric().measure_pairs(pairs)
    assert score is not None and score.value == pytest.approx(1 - 0.41 / 3)
    assert score.value == pytest.approx(_theirs(HBrier(), pairs), abs=1e-9)
