"""context_entity_recall (deterministic): entities extracted by pattern, recall counted by hand."""

from __future__ import annotations

import pytest

from evald.case import Document, EvalCase
from evald.metrics.rag.context_entity_recall import ContextEntityRecallMetric, entities


def _case(expected: str, *contents: str | None) -> EvalCase:
    return EvalCase(expected=expected, context=tuple(Document(id=str(i), content=c) for i, c in enumerate(contents)))


def test_entities_are_names_numbers_identifiers_and_dates() -> None:
    assert entities("Marie Curie won the Nobel Prize in 1903") == ["marie curie", "nobel prize", "1903"]
    found = entities("Upgrade to OpenSSL 3.0.7 for CVE-2024-1234 before 2024-05-01 (`ssl_ctx`)")
    assert {"openssl", "3.0.7", "cve-2024-1234", "2024-05-01", "ssl_ctx"} <= set(found)


def test_recall_by_hand() -> None:
    case = _case("Marie Curie won the Nobel Prize in 1903",
                 "In 1903 the Nobel Prize in physics went to Pierre and Marie Curie.")
    score = ContextEntityRecallMetric().measure(case)
    assert score is not None and score.value == 1.0
    partial = _case("Marie Curie won the Nobel Prize in 1911", "The Nobel Prize went to Marie Curie.", None)
    score = ContextEntityRecallMetric().measure(partial)
    assert score is not None and score.value == pytest.approx(2 / 3)
    assert score.metadata["missing"] == ["1911"]


def test_not_applicable_without_entities_or_content() -> None:
    assert ContextEntityRecallMetric().measure(_case("yes, it is", "anything")) is None
    assert ContextEntityRecallMetric().measure(_case("Paris", None)) is None
