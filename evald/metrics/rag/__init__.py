"""Retrieval-augmented generation metrics: most are scored by an LLM judge (``judges:``); answer_similarity and
context_entity_recall are deterministic."""

METRICS: dict[str, str] = {
    "faithfulness": "evald.metrics.rag.faithfulness:FaithfulnessMetric",
    "answer_relevancy": "evald.metrics.rag.answer_relevancy:AnswerRelevancyMetric",
    "hallucination": "evald.metrics.rag.hallucination:HallucinationMetric",
    "context_relevancy": "evald.metrics.rag.context_relevancy:ContextRelevancyMetric",
    "answer_similarity": "evald.metrics.rag.answer_similarity:AnswerSimilarityMetric",
    "context_entity_recall": "evald.metrics.rag.context_entity_recall:ContextEntityRecallMetric",
    "context_recall": "evald.metrics.rag.context_recall:ContextRecallMetric",
}
