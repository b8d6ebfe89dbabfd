"""Retrieval and groundedness metrics: judge the retrieved documents (``EvalCase.context``) and their use."""

METRICS: dict[str, str] = {
    "retrieval_hit_at_k": "evald.metrics.retrieval.retrieval_hit_at_k:RetrievalHitAtKMetric",
    "retrieval_recall_at_k": "evald.metrics.retrieval.retrieval_recall_at_k:RetrievalRecallAtKMetric",
    "retrieval_mrr": "evald.metrics.retrieval.retrieval_mrr:RetrievalMrrMetric",
    "retrieval_ndcg_at_k": "evald.metrics.retrieval.retrieval_ndcg_at_k:RetrievalNdcgAtKMetric",
    "context_precision": "evald.metrics.retrieval.context_precision:ContextPrecisionMetric",
    "answer_containment_at_k": "evald.metrics.retrieval.answer_containment_at_k:AnswerContainmentAtKMetric",
    "citation_groundedness": "evald.metrics.retrieval.citation_groundedness:CitationGroundednessMetric",
}
