from __future__ import annotations

from typing import Any

import pytest

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.context_precision import ContextPrecisionMetric


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return ContextPrecisionMetric(options=options).measure(case)


def test_relevant_documents_first_scores_one() -> None:
    # relevant at ranks 1, 2 -> P@1 = 1, P@2 = 1 -> 1.0 (the irrelevant tail does not matter)
    score = measure(EvalCase(context=docs("a", "b", "c", "d"), metadata={"relevant_ids": ["a", "b"]}))
    assert score is not None and score.value == 1.0 and score.passed


def test_hand_computed_average_precision() -> None:
    # relevant {a, c, e, z}; ranking a, b, c, d, e -> relevant at ranks 1, 3, 5
    # P@1 = 1/1, P@3 = 2/3, P@5 = 3/5 -> (1 + 0.666667 + 0.6) / 3 = 0.755556 (z, never retrieved, is not counted)
    case = EvalCase(context=docs("a", "b", "c", "d", "e"), metadata={"relevant_ids": ["a", "c", "e", "z"]})
    score = measure(case)
    assert score is not None and score.value == pytest.approx(0.755556, abs=1e-6) and score.passed
    assert score.reason == "mean of P@1=1, P@3=0.667, P@5=0.6"


def test_relevant_documents_last_fails() -> None:
    # relevant at rank 3 only -> P@3 = 1/3
    score = measure(EvalCase(context=docs("x", "y", "a")), relevant_ids=["a"])
    assert score is not None and score.value == pytest.approx(1 / 3) and not score.passed


def test_graded_labels_count_as_relevant_when_above_zero() -> None:
    # grades a=0 (not relevant), b=2 -> relevant at rank 2 only -> P@2 = 1/2
    score = measure(EvalCase(context=docs("a", "b")), relevance={"a": 0, "b": 2})
    assert score is not None and score.value == 0.5


def test_none_relevant_in_top_k_scores_zero() -> None:
    score = measure(EvalCase(context=docs("x", "a"), metadata={"k": 1}), relevant_ids=["a"])
    assert score is not None and score.value == 0.0 and score.reason == "no relevant document in the top 1"


def test_long_reasons_are_truncated() -> None:
    ids = [f"d{i}" for i in range(12)]
    score = measure(EvalCase(context=docs(*ids)), relevant_ids=ids, k=12)
    assert score is not None and score.value == 1.0
    assert score.reason is not None and score.reason.endswith("and 2 more")


def test_not_applicable_without_documents_or_labels() -> None:
    assert measure(EvalCase(), relevant_ids=["a"]) is None
    assert measure(EvalCase(context=docs("a"))) is None
