from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.retrieval_ndcg_at_k import RetrievalNdcgAtKMetric


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return RetrievalNdcgAtKMetric(options=options).measure(case)


def test_ideal_ranking_scores_one() -> None:
    score = measure(EvalCase(context=docs("a", "b", "c"), metadata={"relevance": {"a": 3, "b": 2, "c": 1}}))
    assert score is not None and score.value == pytest.approx(1.0) and score.passed


def test_hand_computed_binary_ndcg() -> None:
    # relevant {b, c}, ranking a, b, c:
    # DCG  = 0/log2(2) + 1/log2(3) + 1/log2(4) = 0.630930 + 0.5 = 1.130930
    # IDCG = 1/log2(2) + 1/log2(3)             = 1 + 0.630930 = 1.630930  -> nDCG = 0.693426
    score = measure(EvalCase(context=docs("a", "b", "c"), metadata={"relevant_ids": ["b", "c"]}))
    assert score is not None and score.value == pytest.approx(0.693426, abs=1e-6) and score.passed


def test_hand_computed_graded_ndcg_with_linear_gains() -> None:
    # grades a=1, c=3, e=2 (e never retrieved); ranking a, b, c, d; k = 3
    # DCG@3  = 1/log2(2) + 0/log2(3) + 3/log2(4)   = 1 + 0 + 1.5             = 2.5
    # IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4)   = 3 + 1.261860 + 0.5      = 4.761860
    # nDCG@3 = 2.5 / 4.761860 = 0.525005
    case = EvalCase(context=docs("a", "b", "c", "d"), metadata={"relevance": {"a": 1, "c": 3, "e": 2}, "k": 3})
    score = measure(case)
    assert score is not None and score.value == pytest.approx(0.525005, abs=1e-6) and score.passed
    assert score.metadata["dcg"] == pytest.approx(2.5) and score.metadata["idcg"] == pytest.approx(4.761860, abs=1e-6)
    assert score.metadata["gain"] == "linear"


def test_hand_computed_graded_ndcg_with_exponential_gains() -> None:
    # same case, gains 2**grade - 1: a=1, c=7, e=3
    # DCG@3  = 1 + 0 + 7/2                   = 4.5
    # IDCG@3 = 7 + 3/log2(3) + 1/2 = 7 + 1.892789 + 0.5 = 9.392789  -> nDCG = 4.5 / 9.392789 = 0.479091
    case = EvalCase(context=docs("a", "b", "c", "d"), metadata={"relevance": {"a": 1, "c": 3, "e": 2}, "k": 3})
    score = measure(case, gain="exponential")
    assert score is not None and score.value == pytest.approx(0.479091, abs=1e-6) and not score.passed
    assert score.value == pytest.approx(4.5 / (7 + 3 / math.log2(3) + 0.5))


def test_no_relevant_in_top_k_scores_zero() -> None:
    score = measure(EvalCase(context=docs("a", "b")), relevant_ids=["z"])
    assert score is not None and score.value == 0.0 and not score.passed


def test_duplicate_relevant_document_is_credited_once() -> None:
    # ranking a, a with a relevant: DCG = 1 (the repeat gains 0), IDCG = 1 -> 1.0, not above
    score = measure(EvalCase(context=docs("a", "a")), relevant_ids=["a"])
    assert score is not None and score.value == pytest.approx(1.0)


def test_not_applicable_without_documents_or_labels() -> None:
    assert measure(EvalCase(), relevant_ids=["a"]) is None
    assert measure(EvalCase(context=docs("a"))) is None


def test_invalid_gain_is_rejected() -> None:
    with pytest.raises(ValidationError):
        RetrievalNdcgAtKMetric(options={"gain": "quadratic"})
