"""Operational (performance dimension) metrics: latency, tokens, errors, cost."""

METRICS: dict[str, str] = {
    "latency": "evald.metrics.operational.latency:LatencyMetric",
    "token_usage": "evald.metrics.operational.token_usage:TokenUsageMetric",
    "error_free": "evald.metrics.operational.error_free:ErrorFreeMetric",
    "cost": "evald.metrics.operational.cost:CostMetric",
    "retry_count": "evald.metrics.operational.retry_count:RetryCountMetric",
    "time_to_first_token": "evald.metrics.operational.time_to_first_token:TimeToFirstTokenMetric",
    "cost_efficiency": "evald.metrics.operational.cost_efficiency:CostEfficiencyMetric",
    "turn_latency": "evald.metrics.operational.turn_latency:TurnLatencyMetric",
    "turn_token_cost": "evald.metrics.operational.turn_token_cost:TurnTokenCostMetric",
}
