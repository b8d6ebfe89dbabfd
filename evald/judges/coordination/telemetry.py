"""Self-metrics of shared judge governance (``evald_judge_coordination_*``), one set per registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from evald.telemetry import shared_instruments

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: why a call was governed in process instead of through Redis (``evald_judge_coordination_fallbacks_total``)
FALLBACK_REASONS = ("unreachable", "timeout", "error", "overflow")


class CoordinationTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.up = Gauge(
            "evald_judge_coordination_up", "1 while the judge's shared governance reaches Redis, 0 while it falls "
            "back to its in-process share.", ["judge"], registry=r,
        )
        self.budget_remaining = Gauge(
            "evald_judge_coordination_budget_remaining", "What is left of the judge's shared budget in the current "
            "UTC window (limit minus what every replica was charged), as last read from Redis.",
            ["judge", "unit", "window"], registry=r,
        )
        self.reservations = Counter(
            "evald_judge_coordination_reservations", "Shared budget reservations by result: admitted, refused "
            "(a window would be exceeded), fallback_admitted / fallback_refused (in process, Redis unreachable).",
            ["judge", "result"], registry=r,
        )
        self.fallbacks = Counter(
            "evald_judge_coordination_fallbacks", "Operations (budget, rate, cache, circuit) governed in process "
            "because Redis could not be used, by reason (unreachable, timeout, error).",
            ["judge", "component", "reason"], registry=r,
        )
        self.errors = Counter(
            "evald_judge_coordination_redis_errors", "Redis calls that failed, by reason (timeout, connection, "
            "error).", ["judge", "reason"], registry=r,
        )
        self.latency = Histogram(
            "evald_judge_coordination_redis_duration_seconds", "Duration of one Redis call of shared judge "
            "governance, by operation.", ["judge", "operation"], buckets=_BUCKETS, registry=r,
        )
        self.reconnects = Counter(
            "evald_judge_coordination_reconnects", "Times Redis was reached again after it had been unreachable.",
            ["judge"], registry=r,
        )


def coordination_telemetry(registry: CollectorRegistry) -> CoordinationTelemetry:
    return shared_instruments(registry, CoordinationTelemetry)
