"""Retrieval-augmented generation metrics scored by an LLM judge (``judges:``)."""

METRICS: dict[str, str] = {
    "faithfulness": "evald.metrics.rag.faithfulness:FaithfulnessMetric",
    "answer_relevancy": "evald.metrics.rag.answer_relevancy:AnswerRelevancyMetric",
    "hallucination": "evald.metrics.rag.hallucination:HallucinationMetric",
    "context_relevancy": "evald.metrics.rag.context_relevancy:ContextRelevancyMetric",
}
