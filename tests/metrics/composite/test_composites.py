"""composite and remediation_quality_index: weighted means by hand, and harness-evals' remediation_quality_index."""

from __future__ import annotations

import pytest
from harness_evals.core.score import Score as HScore
from harness_evals.metrics.security import remediation_quality_index

from evald.case import Score
from evald.metrics.composite.composite import CompositeScoreMetric
from evald.metrics.composite.remediation_quality_index import REMEDIATION_WEIGHTS, RemediationQualityIndexMetric


def _scores(**values: float) -> dict[str, Score]:
    return {name: Score(name, value, 0.5) for name, value in values.items()}


def test_composite_weighted_mean_renormalised_over_present_metrics() -> None:
    metric = CompositeScoreMetric(options={"weights": {"faithfulness": 2, "answer_relevancy": 1, "bias": 1}})
    score = metric.combine(_scores(faithfulness=0.9, answer_relevancy=0.6, unrelated=0.0))
    assert score is not None and score.value == pytest.approx((1.8 + 0.6) / 3)
    assert score.metadata["matched_metrics"] == ["answer_relevancy", "faithfulness"]
    assert metric.combine(_scores(unrelated=1.0)) is None
    strict = CompositeScoreMetric(options={"weights": {"a": 1, "b": 1}, "min_present": 2})
    assert strict.combine(_scores(a=1.0)) is None


def test_composite_weights_are_validated() -> None:
    with pytest.raises(ValueError, match="`weights` needs at least one metric"):
        CompositeScoreMetric(options={"weights": {}})
    with pytest.raises(ValueError, match="weights must be >= 0 with a positive sum"):
        CompositeScoreMetric(options={"weights": {"a": -1}})
    with pytest.raises(ValueError, match="weights must be >= 0 with a positive sum"):
        CompositeScoreMetric(options={"weights": {"a": 0}})


def test_remediation_quality_index_matches_harness_evals() -> None:
    values = {"code_safety": 0.4, "actionability": 1.0, "code_quality": 0.7}
    score = RemediationQualityIndexMetric().combine(_scores(**values))
    assert score is not None and score.value == pytest.approx((0.15 * 0.4 + 0.05 * 1.0 + 0.10 * 0.7) / 0.30)
    by_class = {"code_safety": "CodeSafetyMetric", "actionability": "ActionabilityMetric",
                "code_quality": "CodeQualityMetric"}
    theirs = remediation_quality_index([HScore(name=by_class[k], value=v, threshold=0.5) for k, v in values.items()])
    assert score.value == pytest.approx(theirs.value, abs=1e-9)
    assert set(REMEDIATION_WEIGHTS) >= set(values)
