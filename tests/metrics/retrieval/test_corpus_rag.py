"""The retrieval metrics on the RAG corpus trace (otel-openai-v2.span_only/d_rag), mapped by evald's own mapper.

Ground truth (tests/testdata/corpus/manifest.json): the app retrieves the top 2 of 4 in-memory documents, kb-001
(score 0.7217) then kb-002 (0.3015). This convention records ids and scores but not the document text. The
relevance labels are put in the case metadata, as goldens will.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from evald.case import EvalCase, Score
from evald.mapping.router import MapperRouter, default_mappers
from evald.metrics.registry import get_metric_class
from evald.model import AssembledTrace
from evald.receivers.files import read_signal_file

CORPUS = Path(__file__).resolve().parents[2] / "testdata" / "corpus"
RAG_FILE = "otel-openai-v2.span_only/d_rag.pb"


@pytest.fixture(scope="module")
def rag_case() -> EvalCase:
    spans = read_signal_file(CORPUS / RAG_FILE).spans
    trace_ids = {s.trace_id for s in spans}
    assert len(trace_ids) == 1
    result = MapperRouter(default_mappers()).map(AssembledTrace(trace_id=trace_ids.pop(), spans=spans))
    (case,) = [c for c in result.cases if c.scope == "trace"]
    return case


def measure(kind: str, case: EvalCase, **metadata: Any) -> Score | None:
    labelled = dataclasses.replace(case, metadata={**case.metadata, **metadata})
    return get_metric_class(kind)().measure(labelled)


def test_the_mapped_case_carries_the_ground_truth_ranking(rag_case: EvalCase) -> None:
    manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    (entry,) = [e for e in manifest["files"] if e["file"] == RAG_FILE]
    truth = [(d["id"], d["score"]) for d in entry["ground_truth"]["retrieved_documents"]]
    assert truth == [("kb-001", 0.7217), ("kb-002", 0.3015)]
    assert [(d.id, d.score) for d in rag_case.context] == truth


def test_relevant_kb_001_is_retrieved_first(rag_case: EvalCase) -> None:
    # relevant {kb-001}, ranking kb-001, kb-002, k = 5 (only 2 retrieved):
    # hit = 1; recall = |{kb-001}| / |{kb-001}| = 1/1; mrr = 1/rank 1 = 1; nDCG = (1/log2 2) / (1/log2 2) = 1;
    # context precision = mean(P@1 = 1/1) = 1
    for kind in ("retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_mrr", "retrieval_ndcg_at_k",
                 "context_precision"):
        score = measure(kind, rag_case, relevant_ids=["kb-001"])
        assert score is not None and score.value == 1.0 and score.passed, kind
        assert score.metadata["relevant_ranks"] == [1] and score.metadata["retrieved"] == 2


def test_relevant_documents_partly_retrieved(rag_case: EvalCase) -> None:
    # relevant {kb-002, kb-004} (kb-004 is one of the two documents the app did not retrieve):
    # hit = 1 (kb-002 at rank 2); recall = 1/2; mrr = 1/2
    hit = measure("retrieval_hit_at_k", rag_case, relevant_ids=["kb-002", "kb-004"])
    recall = measure("retrieval_recall_at_k", rag_case, relevant_ids=["kb-002", "kb-004"])
    mrr = measure("retrieval_mrr", rag_case, relevant_ids=["kb-002", "kb-004"])
    assert hit is not None and hit.value == 1.0
    assert recall is not None and recall.value == 0.5
    assert mrr is not None and mrr.value == 0.5
    # with k = 1 only kb-001 is looked at: hit 0, recall 0/2, mrr 0
    for kind in ("retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_mrr"):
        score = measure(kind, rag_case, relevant_ids=["kb-002", "kb-004"], k=1)
        assert score is not None and score.value == 0.0, kind


def test_without_labels_or_document_text_the_metrics_do_not_apply(rag_case: EvalCase) -> None:
    for kind in ("retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_mrr", "retrieval_ndcg_at_k",
                 "context_precision"):
        assert measure(kind, rag_case) is None, kind
    # the convention records no document content, so the answer cannot be looked for in it
    answer = dataclasses.replace(rag_case, expected="30 days")
    assert get_metric_class("answer_containment_at_k")().measure(answer) is None
