"""The replay summary: counts per metric (scores, passes, fails, skips, errors), skips by reason, content capture
by instrumentation, and missing scores as failed zeros with ``missing="zero"``."""

from __future__ import annotations

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.model import ScoredCase
from evald.summary import summarize


def _scored(scores: tuple[Score, ...], skipped: tuple[tuple[str, str], ...] = (),
            errors: tuple[tuple[str, str], ...] = (), capture: str | None = None) -> ScoredCase:
    metadata = {} if capture is None else {"content_capture": capture, "instrumentation": "openinference"}
    dimensions = {"exact_match": "correctness", "toxicity": "safety", "latency": "performance"}
    return ScoredCase(EvalCase(trace_id="t", metadata=metadata), scores, skipped, errors, dimensions)


CASES = [
    _scored((Score("exact_match", 1.0, 0.5), Score("toxicity", 0.0, 0.5, dimension=Dimension.SAFETY)),
            skipped=(("latency", "missing_latency_ms"),), capture="full"),
    _scored((Score("exact_match", 0.0, 0.5),), skipped=(("toxicity", "missing_output"),),
            errors=(("latency", "ValueError"),), capture="none"),
    _scored((), skipped=(("exact_match", "missing_output"), ("toxicity", "missing_output")), capture="none"),
]


@pytest.mark.parametrize("missing", ["skip", "zero"])
def test_counts_per_metric_and_reason(missing: str) -> None:
    summary = summarize(CASES, missing)
    assert summary.cases == 3
    assert list(summary.metrics) == ["exact_match", "toxicity", "latency"]  # in order of first outcome
    exact, toxicity, latency = (summary.metrics[n] for n in ("exact_match", "toxicity", "latency"))
    assert (exact.dimension, toxicity.dimension, latency.dimension) == ("correctness", "safety", "performance")
    assert (exact.passed, exact.skipped, toxicity.skipped, latency.skipped, latency.errors) == (1, 1, 2, 1, 1)
    if missing == "skip":
        assert exact.values == [1.0, 0.0] and exact.failed == 1
        assert latency.values == [] and latency.count == 0
    else:  # every skip and error is a failed 0
        assert exact.values == [1.0, 0.0, 0.0] and exact.failed == 2
        assert latency.values == [0.0, 0.0] and latency.failed == 2
    assert summary.skipped_by_reason == {"missing_latency_ms": {"latency": 1},
                                         "missing_output": {"toxicity": 2, "exact_match": 1}}
    assert summary.content_capture == {"openinference": {"full": 1, "none": 2}}


def test_missing_must_be_skip_or_zero() -> None:
    with pytest.raises(ValueError, match="missing must be"):
        summarize(CASES, "drop")
