from __future__ import annotations

from typing import Any

import pytest

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.retrieval_mrr import RetrievalMrrMetric


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return RetrievalMrrMetric(options=options).measure(case)


def test_first_rank_scores_one() -> None:
    score = measure(EvalCase(context=docs("a", "b"), metadata={"relevant_ids": ["a", "b"]}))
    assert score is not None and score.value == 1.0 and score.passed


def test_hand_computed_reciprocal_rank() -> None:
    # first relevant ("c") at rank 3 -> 1/3, below the 0.5 threshold; the document without id still takes rank 2
    score = measure(EvalCase(context=docs("a", None, "c", "d"), metadata={"relevant_ids": ["d", "c"]}))
    assert score is not None and score.value == pytest.approx(1 / 3) and not score.passed
    assert score.reason == "first relevant document at rank 3"


def test_rank_two_passes_the_default_threshold() -> None:
    score = measure(EvalCase(context=docs("a", "b")), relevant_ids=["b"])
    assert score is not None and score.value == 0.5 and score.passed


def test_none_in_the_top_k_scores_zero() -> None:
    score = measure(EvalCase(context=docs("a", "b", "c"), metadata={"k": 2}), relevant_ids=["c"])
    assert score is not None and score.value == 0.0
    assert score.reason == "no relevant document in the top 2"


def test_not_applicable_without_documents_or_labels() -> None:
    assert measure(EvalCase(), relevant_ids=["a"]) is None
    assert measure(EvalCase(context=docs("a"))) is None
