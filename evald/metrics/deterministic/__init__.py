"""Deterministic correctness metrics: compare the output with an expected value or a pattern."""

METRICS: dict[str, str] = {
    "exact_match": "evald.metrics.deterministic.exact_match:ExactMatchMetric",
    "contains": "evald.metrics.deterministic.contains:ContainsMetric",
    "regex": "evald.metrics.deterministic.regex:RegexMetric",
    "json_valid": "evald.metrics.deterministic.json_valid:JsonValidMetric",
    "numeric_diff": "evald.metrics.deterministic.numeric_diff:NumericDiffMetric",
    "list_contains": "evald.metrics.deterministic.list_contains:ListContainsMetric",
    "json_schema": "evald.metrics.deterministic.json_schema:JsonSchemaMetric",
    "json_diff": "evald.metrics.deterministic.json_diff:JsonDiffMetric",
    "ordinal_distance": "evald.metrics.deterministic.ordinal_distance:OrdinalDistanceMetric",
    "webhook": "evald.metrics.deterministic.webhook:WebhookMetric",
}
