"""Deterministic correctness metrics: compare the output with an expected value or a pattern."""

METRICS: dict[str, str] = {
    "exact_match": "evald.metrics.deterministic.exact_match:ExactMatchMetric",
    "contains": "evald.metrics.deterministic.contains:ContainsMetric",
    "regex": "evald.metrics.deterministic.regex:RegexMetric",
    "json_valid": "evald.metrics.deterministic.json_valid:JsonValidMetric",
}
