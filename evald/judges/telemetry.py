"""Judge self-metrics on the service's ``Telemetry`` registry (one set per registry; labels: judge name, outcome)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from evald.telemetry import shared_instruments

_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: values of ``evald_judge_circuit_state``
CIRCUIT_CLOSED, CIRCUIT_OPEN, CIRCUIT_HALF_OPEN = 0, 1, 2


class JudgeTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        r = registry
        self.requests = Counter(
            "evald_judge_requests",
            "Judge calls by outcome: one per attempt sent (ok, rate_limited, server_error, timeout, ...) and one "
            "per call refused or given up before sending (budget_exhausted, circuit_open, never_send; timeout: its "
            "deadline or its metric's passed while it waited).",
            ["judge", "outcome"], registry=r,
        )
        self.duration = Histogram(
            "evald_judge_request_duration_seconds", "Duration of one judge request attempt.", ["judge"],
            buckets=_BUCKETS, registry=r,
        )
        self.tokens = Counter(
            "evald_judge_tokens", "Tokens charged to the judge's budget, by direction: the usage the provider "
            "reported, or the worst case when it reported none that is usable or may have billed an attempt that "
            "gave no answer (a timeout).", ["judge", "direction"], registry=r
        )
        self.usage_invalid = Counter(
            "evald_judge_usage_invalid", "Answers whose reported usage could not be charged as reported, by reason "
            "(missing, non_numeric, non_finite, negative, absurd: charged the worst case) or that billed more than "
            "the worst case reserved (above_worst_case: charged as reported).", ["judge", "reason"], registry=r,
        )
        self.cost = Counter(
            "evald_judge_cost_usd", "Judge spend in USD charged to the budget (price x charged tokens).", ["judge"],
            registry=r,
        )
        self.budget_remaining = Gauge(
            "evald_judge_budget_remaining_usd", "USD left of the judge's budget in the current UTC hour or day.",
            ["judge", "window"], registry=r,
        )
        self.budget_remaining_tokens = Gauge(
            "evald_judge_budget_remaining_tokens", "Tokens left of the judge's budget in the current UTC hour or day.",
            ["judge", "window"], registry=r,
        )
        self.cache_requests = Counter(
            "evald_judge_cache_requests", "Verdict cache lookups: hit (no call made, incl. sharing a call in "
            "flight) or miss.", ["judge", "result"], registry=r,
        )
        self.circuit_state = Gauge(
            "evald_judge_circuit_state", "Circuit breaker: 0 closed, 1 open, 2 half-open.", ["judge"], registry=r
        )


def judge_telemetry(registry: CollectorRegistry) -> JudgeTelemetry:
    """The judge instruments of ``registry``, created on first use."""
    return shared_instruments(registry, JudgeTelemetry)
