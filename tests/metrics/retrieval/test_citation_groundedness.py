from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Document, EvalCase, Score
from evald.metrics.retrieval.citation_groundedness import CitationGroundednessMetric, cited_references, quoted_spans

DOCS = (
    Document(id="kb-001", content="Annual plans can be refunded in full within 30 days of purchase."),
    Document(id="kb-002", content="Monthly plans are non-refundable."),
)
IDS_ONLY = (Document(id="kb-001"), Document(id="kb-002"))


def measure(output: Any, context: tuple[Document, ...] = DOCS, **options: Any) -> Score | None:
    return CitationGroundednessMetric(options=options).measure(EvalCase(output=output, context=context))


def test_citations_by_id_and_by_index_pass() -> None:
    score = measure("Refunds within 30 days [kb-001]; monthly plans are not refundable [2].")
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "all 2 citation(s) grounded"


def test_hand_computed_partial_grounding() -> None:
    # distinct references: kb-001 (id), 3 (index > 2 documents), kb-009 (unknown id), 1 (index) -> 2 of 4 = 0.5;
    # the repeated [kb-001] counts once
    score = measure("A [kb-001]. B [3]. C [kb-009]. D [1]. E [kb-001].")
    assert score is not None and score.value == 0.5 and not score.passed
    assert score.metadata["ungrounded"] == ["[3]", "[kb-009]"]
    assert score.reason == "2 of 4 citation(s) grounded; not found: [3], [kb-009]"


def test_a_marker_listing_several_references() -> None:
    assert cited_references("see [1, 2] and [kb-001,kb-009]", re.compile(
        CitationGroundednessMetric.Options.model_fields["pattern"].default)) == ["1", "2", "kb-001", "kb-009"]
    score = measure("see [1, 2] and [kb-001,kb-009]")  # 3 of 4 grounded
    assert score is not None and score.value == 0.75


def test_markdown_links_are_not_citations() -> None:
    score = measure("See [the docs](https://example.com) and [kb-002].")
    assert score is not None and score.value == 1.0 and score.metadata["citations"] == 1


def test_no_citation_scores_zero_when_required() -> None:
    score = measure("Annual plans can be refunded within 30 days.")
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "no citation found, but citations are required"


def test_no_citation_is_not_applicable_when_not_required() -> None:
    assert measure("Annual plans can be refunded within 30 days.", required=False) is None


def test_custom_pattern() -> None:
    score = measure("As stated in (source: kb-002) and (source: 7).", pattern=r"\(source: ([^)]+)\)")
    assert score is not None and score.value == 0.5  # kb-002 yes, index 7 of 2 no
    score = measure("Refund ^1^", pattern=r"\^\d+\^")  # no group: the whole match "^1^" is the reference
    assert score is not None and score.value == 0.0


def test_evidence_spans_are_checked_against_document_content() -> None:
    # markers: [1] grounded; spans: the first occurs (case/whitespace-insensitive, trailing "." trimmed), the
    # second does not; "short" is below min_span_length (8) -> 2 of 3 grounded
    output = 'Policy [1]: \u201crefunded in FULL within  30 days.\u201d and "refunds at any time" but "short"'
    score = measure(output, evidence_spans=True)
    assert score is not None and score.value == pytest.approx(2 / 3)
    assert score.metadata["ungrounded"] == ['"refunds at any time"']
    assert (score.metadata["references"], score.metadata["spans"]) == (1, 2)


def test_evidence_spans_alone_satisfy_required() -> None:
    score = measure('They said "non-refundable".', evidence_spans=True)
    assert score is not None and score.value == 1.0


def test_spans_without_document_content_are_unjudged() -> None:
    assert measure('They said "non-refundable".', context=IDS_ONLY, evidence_spans=True) is None
    score = measure('They said "non-refundable" [kb-002].', context=IDS_ONLY, evidence_spans=True)
    assert score is not None and score.value == 1.0 and score.metadata["unjudged_spans"] == 1


def test_quoted_spans_are_distinct_and_trimmed() -> None:
    assert quoted_spans('"within 30 days." then "within 30 days" and "no"', 3) == ["within 30 days"]


@pytest.mark.parametrize("output", [None, {"answer": "x [1]"}])
def test_non_text_output_is_not_applicable(output: Any) -> None:
    assert measure(output) is None


def test_no_retrieved_documents_is_not_applicable() -> None:
    assert measure("Refunds [1].", context=()) is None


@pytest.mark.parametrize("options", [{"pattern": "(unclosed"}, {"min_span_length": 0}, {"required": "maybe"}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        CitationGroundednessMetric(options=options)
