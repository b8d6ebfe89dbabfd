"""Structural metrics: how close the output's JSON/YAML structure is to the expected one."""

METRICS: dict[str, str] = {
    "structural_similarity": "evald.metrics.structural.structural_similarity:StructuralSimilarityMetric",
}
