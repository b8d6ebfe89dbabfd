"""Score metrics of the OTLP exporter, on a private MeterProvider (never the global one).

Instruments (names are evald's own: no GenAI metric for evaluation scores exists in the semantic conventions
read, and the ``gen_ai.*`` metric namespace belongs to them; see docs/exporters.md):

* ``evald.evaluation.score``: histogram, unit ``1``, explicit buckets 0.1, 0.2, ... 1.0 (a View), one
  observation per score, attributes below plus ``evald.passed``.
* ``evald.evaluation.count``: counter, unit ``{evaluation}``, one per evaluation, attributes below plus
  ``evald.outcome`` = ``pass``, ``fail``, ``skipped`` (not applicable) or ``error``.

Attributes: ``gen_ai.evaluation.name``, ``evald.metric.dimension``, ``evald.case.scope``, and when known
``service.name`` (of the evaluated app), ``gen_ai.request.model``, ``gen_ai.agent.name``. Values are cut at 128
characters. Cardinality is bounded here, before the SDK: at most ``max_attribute_sets`` distinct
(name, dimension, scope, service, model, agent) sets are kept; later sets keep name, dimension and scope and get
``__overflow__`` for service, model and agent, and each such evaluation is counted. The SDK's own per-stream
cardinality limit (``otel.metric.overflow``) is set above what that cap can produce, as a backstop only.

Exemplars: measurements are recorded in the evaluated span's context (``case_context``) with the
``TraceBasedExemplarFilter`` passed explicitly (the environment cannot turn it off), so histogram buckets and
counter points carry exemplars with the evaluated span's trace and span id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider, TraceBasedExemplarFilter
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

import evald
from evald.model import ScoredCase

SCORE_HISTOGRAM = "evald.evaluation.score"
EVALUATION_COUNTER = "evald.evaluation.count"
SCORE_BOUNDARIES = tuple(round(i / 10, 1) for i in range(1, 11))
OVERFLOW = "__overflow__"
MAX_ATTRIBUTE_VALUE = 128

EVALUATION_NAME = "gen_ai.evaluation.name"
DIMENSION = "evald.metric.dimension"
SCOPE = "evald.case.scope"
SERVICE_NAME = "service.name"
REQUEST_MODEL = "gen_ai.request.model"
AGENT_NAME = "gen_ai.agent.name"
PASSED = "evald.passed"
OUTCOME = "evald.outcome"

_Key = tuple[str, str, str, str | None, str | None, str | None]


def _value(value: object) -> str | None:
    return value[:MAX_ATTRIBUTE_VALUE] if isinstance(value, str) and value else None


class ScoreMetrics:
    """The histogram and the counter of one otlp exporter, pushed every ``export_interval`` seconds."""

    def __init__(
        self,
        exporter: MetricExporter,
        resource: Resource,
        *,
        export_interval: float,
        timeout: float,
        max_attribute_sets: int,
        on_overflow: Callable[[], None],
    ) -> None:
        self._max_sets = max_attribute_sets
        self._on_overflow = on_overflow
        self._admitted: set[_Key] = set()
        # the cap above yields at most 4 counter points (outcomes) per admitted set, plus one overflow set per
        # (name, dimension, scope), which the configured metrics bound; keep the SDK's own limit well above that
        backstop = 4 * max_attribute_sets + 2000
        views = [
            View(instrument_name=SCORE_HISTOGRAM, aggregation=ExplicitBucketHistogramAggregation(SCORE_BOUNDARIES),
                 aggregation_cardinality_limit=backstop),
            View(instrument_name=EVALUATION_COUNTER, aggregation_cardinality_limit=backstop),
        ]
        reader = PeriodicExportingMetricReader(
            exporter, export_interval_millis=export_interval * 1000, export_timeout_millis=timeout * 1000
        )
        self._exporter = exporter
        self.provider = MeterProvider(
            metric_readers=[reader], resource=resource, views=views, exemplar_filter=TraceBasedExemplarFilter(),
            shutdown_on_exit=False,
        )
        meter = self.provider.get_meter("evald", getattr(evald, "__version__", None))
        self._scores = meter.create_histogram(
            SCORE_HISTOGRAM, unit="1", description="Score values of evaluations (0..1), by metric and evaluated app."
        )
        self._count = meter.create_counter(
            EVALUATION_COUNTER, unit="{evaluation}",
            description="Evaluations by outcome: pass, fail, skipped (not applicable), error.",
        )

    def _attributes(self, name: str, dimension: str, scored: ScoredCase) -> dict[str, Any]:
        case = scored.case
        agent = case.metadata.get("agent_name")
        key: _Key = (
            name[:MAX_ATTRIBUTE_VALUE], dimension[:MAX_ATTRIBUTE_VALUE], case.scope,
            _value(case.service_name), _value(case.request_model or case.model), _value(agent),
        )
        if key not in self._admitted:
            if len(self._admitted) < self._max_sets:
                self._admitted.add(key)
            else:
                self._on_overflow()
                key = (key[0], key[1], key[2], OVERFLOW, OVERFLOW, OVERFLOW)
        attrs: dict[str, Any] = {EVALUATION_NAME: key[0], DIMENSION: key[1], SCOPE: key[2]}
        for attr, value in ((SERVICE_NAME, key[3]), (REQUEST_MODEL, key[4]), (AGENT_NAME, key[5])):
            if value is not None:
                attrs[attr] = value
        return attrs

    def record(self, scored: ScoredCase, context: Context | None) -> None:
        """Observe every score and count every outcome of one scored case (in-memory; never blocks)."""
        for score in scored.scores:
            attrs = self._attributes(score.name, score.dimension.value, scored)
            self._scores.record(score.value, {**attrs, PASSED: score.passed}, context=context)
            self._count.add(1, {**attrs, OUTCOME: "pass" if score.passed else "fail"}, context=context)
        for outcome, entries in (("skipped", scored.skipped), ("error", scored.errors)):
            for name, _reason in entries:
                attrs = self._attributes(name, scored.metric_dimensions.get(name, ""), scored)
                self._count.add(1, {**attrs, OUTCOME: outcome}, context=context)

    def force_flush(self, timeout_millis: int) -> bool:
        return bool(self.provider.force_flush(timeout_millis))

    def abort(self) -> None:
        """The flush ran out of time: end the SDK exporter's retries so shutdown can finish."""
        shutdown: Callable[..., None] = self._exporter.shutdown
        shutdown(timeout_millis=0)

    def shutdown(self, timeout_millis: int) -> None:
        self.provider.shutdown(timeout_millis)
