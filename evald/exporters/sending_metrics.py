"""Self-metrics of the exporters' sending: one set per service registry, shared by every exporter.

``evald_exporter_sent_scores_total{exporter}``, ``evald_exporter_dropped_scores_total{exporter,reason}`` (reasons in
:data:`DROP_REASONS`), ``evald_exporter_retries_total{exporter,reason}``, ``evald_exporter_queue_size{exporter}``,
``evald_exporter_queue_capacity{exporter}``. Counted in scores.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge

from evald.telemetry import Telemetry, shared_instruments

DROP_REASONS = ("queue_full", "retries_exhausted", "permanent_error", "shutdown")


@dataclass(frozen=True, slots=True)
class ExporterInstruments:
    sent: Counter
    dropped: Counter
    retries: Counter
    queue_size: Gauge
    queue_capacity: Gauge


def exporter_instruments(telemetry: Telemetry) -> ExporterInstruments:
    """The exporter self-metrics of ``telemetry``'s registry (created once per registry, shared by exporters)."""
    return shared_instruments(telemetry.registry, _build_instruments)


def _build_instruments(registry: CollectorRegistry) -> ExporterInstruments:
    return ExporterInstruments(
        sent=Counter("evald_exporter_sent_scores", "Scores an exporter delivered.", ["exporter"], registry=registry),
        dropped=Counter(
            "evald_exporter_dropped_scores",
            "Scores an exporter gave up on, by reason: queue_full, retries_exhausted, permanent_error, shutdown.",
            ["exporter", "reason"], registry=registry,
        ),
        retries=Counter("evald_exporter_retries", "Send attempts that failed and were retried, by reason.",
                        ["exporter", "reason"], registry=registry),
        queue_size=Gauge("evald_exporter_queue_size", "Scores waiting in an exporter's sending queue.",
                         ["exporter"], registry=registry),
        queue_capacity=Gauge("evald_exporter_queue_capacity", "Capacity of an exporter's sending queue.",
                             ["exporter"], registry=registry),
    )
