from __future__ import annotations

from typing import Any

import pytest

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.retrieval_recall_at_k import RetrievalRecallAtKMetric


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return RetrievalRecallAtKMetric(options=options).measure(case)


def test_all_relevant_found_passes() -> None:
    score = measure(EvalCase(context=docs("a", "b"), metadata={"relevant_ids": ["a", "b"]}))
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "2 of 2 relevant document(s) in the top 5"


def test_hand_computed_partial_recall() -> None:
    # relevant {a, c, x}; top 3 = a, b, c -> found {a, c} -> 2 / 3 (d is beyond k, x never retrieved)
    case = EvalCase(context=docs("a", "b", "c", "d"), metadata={"relevant_ids": ["a", "c", "x"]})
    score = measure(case, k=3)
    assert score is not None and score.value == pytest.approx(2 / 3) and score.passed  # threshold 0.5
    assert score.reason == "2 of 3 relevant document(s) in the top 3; missed: x"


def test_nothing_found_fails() -> None:
    score = measure(EvalCase(context=docs("a", "b")), relevant_ids=["c", "d"])
    assert score is not None and score.value == 0.0 and not score.passed


def test_duplicates_and_documents_without_id_count_once_or_never() -> None:
    # top 4 = a, a, (no id), b; relevant {a, z}: found {a} -> 1 / 2
    score = measure(EvalCase(context=docs("a", "a", None, "b")), relevant_ids=["a", "z"])
    assert score is not None and score.value == 0.5


def test_many_missed_ids_are_truncated_in_the_reason() -> None:
    score = measure(EvalCase(context=docs("a")), relevant_ids=["a"] + [f"m{i}" for i in range(7)])
    assert score is not None and score.value == pytest.approx(1 / 8)
    assert score.reason is not None and score.reason.endswith("and 2 more")


def test_not_applicable_without_documents_or_labels() -> None:
    assert measure(EvalCase(), relevant_ids=["a"]) is None
    assert measure(EvalCase(context=docs("a"), expected="a")) is None
