"""Similarity correctness metrics: how close the output text is to the expected text (edit distance, ROUGE, BLEU)."""

METRICS: dict[str, str] = {
    "levenshtein": "evald.metrics.similarity.levenshtein:LevenshteinMetric",
    "rouge_l": "evald.metrics.similarity.rouge_l:RougeLMetric",
    "bleu": "evald.metrics.similarity.bleu:BleuMetric",
    "embedding_cosine": "evald.metrics.similarity.embedding_cosine:EmbeddingCosineMetric",
    "bertscore_like": "evald.metrics.similarity.bertscore_like:BertscoreLikeMetric",
}
