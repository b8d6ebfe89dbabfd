"""Operational (performance dimension) metrics: latency, tokens, errors, cost."""

METRICS: dict[str, str] = {
    "latency": "evald.metrics.operational.latency:LatencyMetric",
    "token_usage": "evald.metrics.operational.token_usage:TokenUsageMetric",
    "error_free": "evald.metrics.operational.error_free:ErrorFreeMetric",
}
