from __future__ import annotations

from typing import Any

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.retrieval_hit_at_k import RetrievalHitAtKMetric


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return RetrievalHitAtKMetric(options=options).measure(case)


def test_relevant_document_in_the_top_k_passes() -> None:
    score = measure(EvalCase(context=docs("a", "b", "c"), metadata={"relevant_ids": ["c"]}))
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "first relevant document at rank 3 (k=5)"
    assert score.metadata["relevant_ranks"] == [3]


def test_relevant_document_beyond_the_default_k_fails() -> None:
    # default k = 5: "f" is at rank 6
    case = EvalCase(context=docs("a", "b", "c", "d", "e", "f"), metadata={"relevant_ids": ["f"]})
    score = measure(case)
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "no relevant document in the top 5 of 6 retrieved"
    wider = measure(case, k=6)
    assert wider is not None and wider.value == 1.0


def test_case_k_overrides_the_option() -> None:
    case = EvalCase(context=docs("a", "b"), metadata={"relevant_ids": ["b"], "k": 1})
    score = measure(case, k=2)
    assert score is not None and score.value == 0.0 and score.metadata["k"] == 1


def test_labels_from_expected_or_options() -> None:
    score = measure(EvalCase(context=docs("a"), expected={"relevant_ids": ["a"]}))
    assert score is not None and score.value == 1.0 and score.metadata["labels_from"] == "expected"
    score = measure(EvalCase(context=docs("a")), relevance={"a": 2})
    assert score is not None and score.value == 1.0 and score.metadata["labels_from"] == "options"


def test_documents_without_id_never_hit() -> None:
    score = measure(EvalCase(context=docs(None, None)), relevant_ids=["a"])
    assert score is not None and score.value == 0.0


def test_not_applicable_without_documents_or_labels() -> None:
    assert measure(EvalCase(metadata={"relevant_ids": ["a"]})) is None
    assert measure(EvalCase(context=docs("a"))) is None
    assert measure(EvalCase(context=docs("a"), metadata={"relevance": {"a": 0}})) is None  # nothing relevant
