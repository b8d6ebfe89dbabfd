from __future__ import annotations

from typing import Any

import pytest

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.answer_containment_at_k import AnswerContainmentAtKMetric

REFUND = Document(id="kb-001", content="Refund policy: annual plans can be refunded in full\nwithin 30  days.")
MONTHLY = Document(id="kb-002", content="Monthly plans are non-refundable.")
NO_TEXT = Document(id="kb-003", score=0.2)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return AnswerContainmentAtKMetric(options=options).measure(case)


def test_answer_in_a_top_k_document_passes() -> None:
    # case-folded and whitespace-normalized: "WITHIN 30 days" matches "within 30  days"
    score = measure(EvalCase(context=(MONTHLY, REFUND), expected="WITHIN 30 days"))
    assert score is not None and score.value == 1.0 and score.passed
    assert score.metadata == {"k": 5, "rank": 2, "searched": 2}


def test_answer_absent_fails() -> None:
    score = measure(EvalCase(context=(REFUND, MONTHLY), expected="60 days"))
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "expected answer in none of the 2 top-5 document(s) with content"


def test_answer_beyond_k_fails() -> None:
    score = measure(EvalCase(context=(MONTHLY, REFUND), expected="30 days", metadata={"k": 1}))
    assert score is not None and score.value == 0.0


def test_any_of_several_acceptable_answers() -> None:
    score = measure(EvalCase(context=(REFUND,), expected=["one month", "30 days"]))
    assert score is not None and score.value == 1.0
    score = measure(EvalCase(context=(REFUND,), expected=("one month",)))
    assert score is not None and score.value == 0.0


def test_answer_key_of_an_expected_mapping() -> None:
    score = measure(EvalCase(context=(REFUND,), expected={"relevant_ids": ["kb-001"], "answer": "annual plans"}))
    assert score is not None and score.value == 1.0


def test_documents_without_content_are_skipped() -> None:
    score = measure(EvalCase(context=(NO_TEXT, REFUND), expected="30 days"))
    assert score is not None and score.value == 1.0 and score.metadata["searched"] == 1


@pytest.mark.parametrize("expected", [None, "", "   ", [], [""], 42, {"relevant_ids": ["kb-001"]}])
def test_no_expected_answer_is_not_applicable(expected: Any) -> None:
    assert measure(EvalCase(context=(REFUND,), expected=expected)) is None


def test_no_content_in_the_top_k_is_not_applicable() -> None:
    assert measure(EvalCase(expected="30 days")) is None
    assert measure(EvalCase(context=(NO_TEXT,), expected="30 days")) is None
    assert measure(EvalCase(context=(NO_TEXT, REFUND), expected="30 days"), k=1) is None
