"""Prometheus exporter: scores as pull-based series, served by the admin endpoint's ``/metrics``.

Config keys (``exporters.prometheus``):
  endpoint          ``host:port`` of ``/metrics``, ``/healthz``, ``/readyz`` (default ``0.0.0.0:9464``)
  pass_rate_window  length of the rolling window of ``evald_pass_rate_ratio`` (duration, default ``5m``)
  baseline_window, regression_margin, regression_min_evaluations   the online baseline (prometheus_table.py)
  max_series        cap on distinct (metric, dimension, scope, service_name, model) label sets (default 10000)
  score_buckets     upper bounds of the ``evald_score`` histogram (default 0.1, 0.2, ... 1.0; ``+Inf`` is implicit)
  const_labels      extra labels put on every score series, e.g. ``{env: prod}``

Series (docs/prometheus.md): ``evald_evaluations_total`` (outcome = pass, fail, skipped, error), ``evald_score``
(histogram), ``evald_pass_rate_ratio`` (passes / (passes + fails) over the window), ``evald_pass_rate_window_seconds``,
``evald_pass_rate_baseline_ratio``, ``evald_pass_rate_regression`` and the self-metric
``evald_exporter_series_overflow_total{exporter}``. ``evald_pass_rate`` and ``evald_pass_rate_baseline``, the
names before the unit suffix, are still exported with the same samples for one release (deprecated;
``DEPRECATED_NAMES``).

Labels come only from the metric name, its dimension, the case scope, ``service.name`` and the model; a missing
service name or model is the empty label value (which Prometheus treats as an absent label). Label values are
cut at 128 characters. Trace ids, span ids and span text never become labels; instead, in the OpenMetrics
exposition every ``evald_score`` bucket and every ``evald_evaluations_total`` outcome carries an exemplar
``{trace_id, span_id}`` of the latest evaluation that landed in it, so a dashboard can link a regression (or an
error) to the traces behind it. Label sets beyond
``max_series`` fold into ``service_name="__overflow__", model="__overflow__"`` and every folded evaluation is
counted. The pass-rate window is kept as fixed time buckets (at most 60 per label set), so memory is bounded;
a label set with no pass/fail in the window has no ``evald_pass_rate_ratio`` sample at all (never a stale value).
No family here has a ``_created`` sample (evald turns prometheus_client's off too: evald/telemetry.py).

Failure semantics: pull-based, so no queue and no retry; ``export`` only updates a bounded in-memory table and
never raises for data; series are built fresh on every scrape by a ``prometheus_client`` collector registered
on the service's registry (one prometheus exporter per evald instance).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.samples import Exemplar, Sample
from pydantic import Field, field_validator

from evald.config.base import ComponentConfig, Duration, Endpoint
from evald.exporters.prometheus_table import OUTCOMES, ScoreTable
from evald.model import ScoredCase
from evald.telemetry import Telemetry

SCORE_LABELS = ("metric", "dimension", "scope", "service_name", "model")
DEFAULT_BUCKETS = tuple(round(i / 10, 1) for i in range(1, 11))
_LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_RESERVED = frozenset({*SCORE_LABELS, "outcome", "le", "exporter"})
#: old name -> new name: exported with the same samples for one release after the rename to unit-suffixed names
DEPRECATED_NAMES = {
    "evald_pass_rate": "evald_pass_rate_ratio",
    "evald_pass_rate_baseline": "evald_pass_rate_baseline_ratio",
}


class PrometheusExporterConfig(ComponentConfig):
    endpoint: Endpoint = Field("0.0.0.0:9464", description="Where /metrics (with /healthz, /readyz) is served.")
    pass_rate_window: Duration = Field(300.0, description="Window of the rolling `evald_pass_rate_ratio` gauge.")
    baseline_window: Duration = Field(
        86400.0, description="Window of the online baseline `evald_pass_rate_baseline_ratio` (0 disables it)."
    )
    regression_margin: float = Field(
        0.1, ge=0.0, le=1.0, description="`evald_pass_rate_regression` is 1 when the pass rate is this far below "
        "the baseline."
    )
    regression_min_evaluations: int = Field(
        20, ge=1, description="Pass/fail evaluations both windows need before a regression is flagged."
    )
    max_series: int = Field(
        default=10000, ge=1, description="Label sets kept; beyond it scores fold into `__overflow__` (counted)."
    )
    score_buckets: tuple[float, ...] = Field(DEFAULT_BUCKETS, description="Upper bounds of `evald_score` buckets.")
    const_labels: dict[str, str] = Field(default_factory=dict, description="Labels added to every evald series.")

    @field_validator("pass_rate_window")
    @classmethod
    def _positive_window(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("pass_rate_window must be greater than 0")
        return value

    @field_validator("score_buckets")
    @classmethod
    def _valid_buckets(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value:
            raise ValueError("score_buckets must not be empty")
        if not all(math.isfinite(b) for b in value):
            raise ValueError("score_buckets must be finite numbers (+Inf is always added)")
        if any(a >= b for a, b in zip(value, value[1:], strict=False)):
            raise ValueError("score_buckets must be strictly increasing")
        return value

    @field_validator("const_labels")
    @classmethod
    def _valid_const_labels(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _LABEL_NAME_RE.match(name) or name.startswith("__"):
                raise ValueError(f"const_labels: {name!r} is not a valid Prometheus label name")
            if name in _RESERVED:
                raise ValueError(f"const_labels: {name!r} is already a label of the score series")
        return value


class _ScoreCollector:
    """Builds the score families fresh on every scrape from a snapshot of the table."""

    def __init__(self, table: ScoreTable, exporter_id: str) -> None:
        self._table = table
        self._exporter_id = exporter_id
        self._const_names = tuple(table.cfg.const_labels)
        self._const_values = tuple(table.cfg.const_labels.values())

    def _families(self) -> tuple[CounterMetricFamily, HistogramMetricFamily, GaugeMetricFamily, GaugeMetricFamily]:
        names = [*SCORE_LABELS, *self._const_names]
        return (
            CounterMetricFamily(
                "evald_evaluations", "Metric evaluations by outcome: pass, fail, skipped (not applicable), error.",
                labels=[*SCORE_LABELS, "outcome", *self._const_names],
            ),
            HistogramMetricFamily("evald_score", "Distribution of score values (0..1).", labels=names),
            GaugeMetricFamily(
                "evald_pass_rate_ratio", "Share of passing scores over the last pass_rate_window (absent if none).",
                labels=names,
            ),
            GaugeMetricFamily(
                "evald_pass_rate_window_seconds", "Length of the evald_pass_rate_ratio window.",
                labels=self._const_names
            ),
        )

    def describe(self) -> Iterable[Metric]:
        yield from self._families()
        yield CounterMetricFamily("evald_exporter_series_overflow", "", labels=["exporter"])

    def collect(self) -> Iterable[Metric]:
        table = self._table
        evaluations, scores, pass_rate, window = self._families()
        const = self._const_values
        with table.lock:
            linked = table.outcome_exemplars
            outcomes = [(k, list(v), list(linked[k])) for k, v in table.outcomes.items()]
            histograms = [(k, list(h.counts), h.total, list(h.exemplars)) for k, h in table.histograms.items()]
            rates = table.pass_rates()
            baselines = table.baseline_states() if table.cfg.baseline_window > 0 else []
            overflowed = table.overflowed
        label_names = [*SCORE_LABELS, "outcome", *self._const_names]
        for key, counts, latest in outcomes:
            for outcome, count, last in zip(OUTCOMES, counts, latest, strict=True):
                # built as a Sample: CounterMetricFamily.add_metric takes an exemplar only in recent prometheus_client
                exemplar = None if last is None else Exemplar({"trace_id": last[0], "span_id": last[1]}, 1.0, last[3])
                evaluations.samples.append(Sample("evald_evaluations_total",
                                                  dict(zip(label_names, [*key, outcome, *const], strict=True)),
                                                  float(count), None, exemplar))
        le = [*(repr(float(b)) for b in table.bounds), "+Inf"]
        for key, counts, total, exemplars in histograms:
            cumulative: list[Any] = []
            running = 0
            for i, (bound, count) in enumerate(zip(le, counts, strict=True)):
                running += count
                sample = exemplars[i] if exemplars else None
                if sample is None:
                    cumulative.append((bound, float(running)))
                else:  # OpenMetrics exemplar: click from a bucket to the trace that landed there
                    trace_id, span_id, value, at = sample
                    cumulative.append((bound, float(running), Exemplar({"trace_id": trace_id, "span_id": span_id},
                                                                       value, at)))
            scores.add_metric([*key, *const], cumulative, total)
        for key, rate in rates:
            pass_rate.add_metric([*key, *const], rate)
        window.add_metric(list(const), table.cfg.pass_rate_window)
        names = [*SCORE_LABELS, *self._const_names]
        baseline = GaugeMetricFamily("evald_pass_rate_baseline_ratio",
                                     "Share of passing scores over the last baseline_window (the online baseline).",
                                     labels=names)
        regression = GaugeMetricFamily(
            "evald_pass_rate_regression",
            "1 when evald_pass_rate_ratio is more than regression_margin below evald_pass_rate_baseline_ratio (both "
            "windows holding at least regression_min_evaluations), else 0.", labels=names)
        for key, rate, flag in baselines:
            baseline.add_metric([*key, *const], rate)
            regression.add_metric([*key, *const], flag)
        overflow = CounterMetricFamily(
            "evald_exporter_series_overflow",
            "Evaluations whose label set exceeded max_series and was folded into __overflow__ label values.",
            labels=["exporter"],
        )
        overflow.add_metric([self._exporter_id], overflowed)
        yield from (evaluations, scores, pass_rate, _deprecated(pass_rate), window, overflow)
        if table.cfg.baseline_window > 0:
            yield from (baseline, _deprecated(baseline), regression)


def _deprecated(family: GaugeMetricFamily) -> GaugeMetricFamily:
    """The family under its pre-rename name (``DEPRECATED_NAMES``), same samples; removed in the next release."""
    old = next(name for name, new in DEPRECATED_NAMES.items() if new == family.name)
    copy = GaugeMetricFamily(old, f"DEPRECATED, removed in the next release: use {family.name}. {family.documentation}")
    copy.samples = [sample._replace(name=old) for sample in family.samples]
    return copy


class PrometheusExporter:
    """Keeps a bounded score table that the registry's ``/metrics`` renders (see the module docstring)."""

    #: export() only records in the table and never waits: the pipeline calls it without a deadline
    in_memory: ClassVar[bool] = True

    def __init__(
        self,
        config: PrometheusExporterConfig,
        telemetry: Telemetry,
        *,
        component_id: str = "prometheus",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = component_id
        self.config = config
        self._table = ScoreTable(config, clock)
        self._collector = _ScoreCollector(self._table, component_id)
        try:
            telemetry.registry.register(self._collector)
        except ValueError as err:
            raise ValueError(f"{component_id}: only one prometheus exporter per evald instance ({err})") from err

    async def start(self) -> None:
        return None

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        self._table.record_batch(batch, time.time())

    async def shutdown(self, timeout: float) -> None:
        """Nothing to flush: the series stay on the registry until the process exits."""
        return None
