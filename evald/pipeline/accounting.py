"""What became of every case, read from the service's own counters: the totals logged when evald stops.

``shutdown_totals(telemetry, no_metric)`` reads ``evald_cases_total`` (cases mapped), ``evald_scored_cases_total``,
``evald_cases_sampled_out_total``, ``evald_cases_dropped_total`` by reason, the assembly window's spans dropped at
shutdown (``evald_assembly_dropped_spans_total{reason="shutdown"}``: traces never mapped, so not cases) and the
exporters' failed cases (``evald_exporter_send_failed_cases_total`` by exporter and reason) and the scores their
sending queues gave up on (``evald_exporter_dropped_scores_total`` by exporter and reason, e.g. ``shutdown``; read
by name, as the exporters own that series). ``no_metric`` is the
pipeline's count of cases no metric applies to (no series of its own). Every mapped case is exactly one of scored,
sampled out, without metric or dropped, so ``unaccounted`` is 0 unless a bug lost a case; the line says it either
way. No configuration; reading cannot fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry
from prometheus_client.registry import Collector

from evald.telemetry import Telemetry


def _by_label(counter: Collector) -> dict[tuple[str, ...], int]:
    """Label values -> value of a labelled counter's ``_total`` samples."""
    out: dict[tuple[str, ...], int] = {}
    for family in counter.collect():
        for sample in family.samples:
            if sample.name.endswith("_total"):
                out[tuple(sample.labels.values())] = int(sample.value)
    return out


def _by_name(registry: CollectorRegistry, sample: str) -> dict[tuple[str, ...], int]:
    """Label values -> value of the samples called ``sample`` (a series some other component registers)."""
    out: dict[tuple[str, ...], int] = {}
    for family in registry.restricted_registry([sample]).collect():
        for s in family.samples:
            if s.name == sample:
                out[tuple(s.labels.values())] = int(s.value)
    return out


@dataclass(frozen=True, slots=True)
class CaseTotals:
    cases: int
    scored: int
    sampled_out: int
    no_metric: int
    dropped: dict[str, int] = field(default_factory=dict)
    window_dropped_spans: int = 0
    export_failures: dict[str, int] = field(default_factory=dict)  # "exporter/reason" -> cases
    exporter_drops: dict[str, int] = field(default_factory=dict)  # "exporter/reason" -> scores

    @property
    def unaccounted(self) -> int:
        return self.cases - self.scored - self.sampled_out - self.no_metric - sum(self.dropped.values())

    @property
    def alarming(self) -> bool:
        """Something was dropped or lost: worth a WARNING."""
        return bool(sum(self.dropped.values()) or self.window_dropped_spans or sum(self.export_failures.values())
                    or sum(self.exporter_drops.values()) or self.unaccounted)

    def line(self) -> str:
        dropped = sum(self.dropped.values())
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(self.dropped.items()) if n)
        text = (f"cases {self.cases} = scored {self.scored} + dropped {dropped}"
                f"{f' ({reasons})' if reasons else ''} + sampled out {self.sampled_out}"
                f" + without metric {self.no_metric}; unaccounted {self.unaccounted}"
                f"; spans dropped by the assembly window at shutdown {self.window_dropped_spans}")
        failures = ", ".join(f"{key} {n}" for key, n in sorted(self.export_failures.items()) if n)
        drops = ", ".join(f"{key} {n}" for key, n in sorted(self.exporter_drops.items()) if n)
        return text + f"; exporter failures (cases): {failures or 'none'}; exporter drops (scores): {drops or 'none'}"


def shutdown_totals(telemetry: Telemetry, no_metric: int) -> CaseTotals:
    return CaseTotals(
        cases=sum(_by_label(telemetry.cases).values()),
        scored=sum(_by_label(telemetry.scored_cases).values()),
        sampled_out=sum(_by_label(telemetry.cases_sampled_out).values()),
        no_metric=no_metric,
        dropped={labels[0]: n for labels, n in _by_label(telemetry.cases_dropped).items() if n},
        window_dropped_spans=_by_label(telemetry.dropped_spans).get(("shutdown",), 0),
        export_failures={"/".join(labels): n for labels, n in _by_label(telemetry.export_failures).items()},
        exporter_drops={"/".join(labels): n for labels, n in
                        _by_name(telemetry.registry, "evald_exporter_dropped_scores_total").items()},
    )
