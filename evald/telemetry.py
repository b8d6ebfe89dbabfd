"""evald's self-metrics and health state, on one prometheus_client registry per service instance.

Every drop point in the pipeline has a counter with a ``reason`` label; labels are always low-cardinality
(never a trace id or any text from a span). Tests create their own ``Telemetry`` so nothing is global, except
one process-wide default set on import: no ``*_created`` series (one per counter/histogram child, never queried),
unless the environment sets ``PROMETHEUS_DISABLE_CREATED_SERIES`` (prometheus_client's switch) either way.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics

from evald.loop_counter import LoopCounter
from evald.loop_histogram import LoopHistogram
from evald.pipeline.case_queue import WaitHistogram

if "PROMETHEUS_DISABLE_CREATED_SERIES" not in os.environ:
    disable_created_metrics()  # type: ignore[no-untyped-call]  # evald default; PROMETHEUS_DISABLE_... wins if set

_DURATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_QUEUE_WAIT_BUCKETS = (
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0,
)


class Telemetry:
    """Holds the self-metric instruments. Names follow the Collector's (``evald_receiver_accepted_spans_total``)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.accepted_spans = Counter(
            "evald_receiver_accepted_spans", "Spans accepted by a receiver.", ["receiver", "transport"], registry=r
        )
        self.refused_spans = Counter(
            "evald_receiver_refused_spans",
            "Spans refused by a receiver (the sender was told), by reason.",
            ["receiver", "transport", "reason"],
            registry=r,
        )
        self.accepted_logs = Counter(
            "evald_receiver_accepted_log_records", "Log records accepted by a receiver.", ["receiver", "transport"],
            registry=r,
        )
        self.refused_logs = Counter(
            "evald_receiver_refused_log_records",
            "Log records refused by a receiver, by reason.",
            ["receiver", "transport", "reason"],
            registry=r,
        )
        self.requests = Counter(
            "evald_receiver_requests", "Export requests by outcome.", ["receiver", "transport", "outcome"], registry=r
        )
        self.unauthenticated_requests = Counter(
            "evald_receiver_unauthenticated_requests",
            "Requests refused for lack of an accepted token (UNAUTHENTICATED / 401), by reason (missing|invalid).",
            ["receiver", "transport", "reason"], registry=r,
        )
        self.dropped_spans = Counter(
            "evald_assembly_dropped_spans", "Spans accepted but dropped by the assembly window, by reason.",
            ["reason"], registry=r,
        )
        self.dropped_logs = Counter(
            "evald_assembly_dropped_log_records", "Log records dropped by the assembly window, by reason.",
            ["reason"], registry=r,
        )
        self.traces_in_window = Gauge("evald_assembly_traces", "Traces being assembled.", registry=r)
        self.traces_released = Counter(
            "evald_assembly_released_traces", "Traces released for evaluation, by trigger.", ["trigger"], registry=r
        )
        self.traces_ignored = Counter(
            "evald_traces_ignored", "Released traces that produced no case, by reason (e.g. no_genai_spans).",
            ["reason"], registry=r,
        )
        self.not_evaluable = Counter(
            "evald_cases_not_evaluable", "GenAI traces or spans that could not be evaluated, by reason.",
            ["reason", "convention", "scope"], registry=r,
        )
        # the four counters incremented per case or trace, only from the event loop thread: no lock per increment
        self.cases = LoopCounter("evald_cases", "Cases produced by mapping.", ["scope"], r)
        self.content_capture = LoopCounter(
            "evald_content_capture_cases",
            "Cases by whether their message content was recorded (content: full|partial|masked|none), per service "
            "and instrumentation library (evald/pipeline/content_diagnosis.py; docs/capturing-content.md).",
            ["service_name", "instrumentation", "content"], r,
        )
        self.cases_sampled_out = Counter(
            "evald_cases_sampled_out", "Cases not evaluated because of the sampling ratio.", ["scope"], registry=r
        )
        self.cases_dropped = Counter(
            "evald_cases_dropped", "Cases dropped before scoring, by reason.", ["reason"], registry=r
        )
        self.traces_reopened = Counter(
            "evald_assembly_reopened_traces", "Released traces reopened by a late span (re-evaluated).", registry=r
        )
        self.conversations_active = Gauge(
            "evald_conversations_active", "Conversations being collected (scope: conversation).", registry=r
        )
        self.conversations_emitted = Counter(
            "evald_conversations_emitted", "Conversation cases produced, by why they were closed.", ["reason"],
            registry=r,
        )
        self.conversation_turns_dropped = Counter(
            "evald_conversation_turns_dropped", "Oldest turns dropped past conversations.max_turns.", registry=r
        )
        self.queue_size = Gauge("evald_queue_size", "Cases waiting for a worker.", registry=r)
        self.queue_capacity = Gauge("evald_queue_capacity", "Capacity of the case queue.", registry=r)
        self.queue_wait = WaitHistogram(
            "evald_queue_wait_seconds", "Time a case waited in the case queue before a worker took it.",
            _QUEUE_WAIT_BUCKETS, r,
        )
        self.metric_duration = LoopHistogram(
            "evald_metric_duration_seconds", "Time one metric took on one case.", "metric", _DURATION_BUCKETS, r
        )
        self.metric_errors = Counter(
            "evald_metric_errors", "Metric evaluations that raised or timed out.", ["metric", "reason"], registry=r
        )
        self.metric_skips = LoopCounter(
            "evald_metric_skips",
            "Metric evaluations skipped, by reason (missing_<field>, not_applicable, budget_exhausted, ...).",
            ["metric", "reason"], r,
        )
        self.scored_cases = LoopCounter("evald_scored_cases", "Cases scored and handed to exporters.", ["scope"], r)
        self.export_failures = Counter(
            "evald_exporter_send_failed_cases", "Scored cases an exporter failed to send.", ["exporter", "reason"],
            registry=r,
        )
        self.build_info = Gauge("evald_build_info", "evald version.", ["version"], registry=r)
        self.health = HealthState()


@dataclass
class HealthState:
    """Liveness is "the loop runs"; readiness is "every component started and we are not shutting down"."""

    started: bool = False
    stopping: bool = False
    components: dict[str, bool] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.started and not self.stopping and all(self.components.values())


class LabelCache:
    """Bound children of a one-label metric, so hot paths skip ``labels()`` (a lock and a dict build per call)."""

    __slots__ = ("_metric", "_children")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._children: dict[str, Any] = {}

    def get(self, value: str) -> Any:
        child = self._children.get(value)
        if child is None:
            child = self._children[value] = self._metric.labels(value)
        return child


class LabelSetCache:
    """``LabelCache`` for a metric with several labels: children keyed by the tuple of label values; at most
    ``limit`` of them are kept (the cache starts over past it: label values are low-cardinality by design)."""

    __slots__ = ("_metric", "_children", "_limit")

    def __init__(self, metric: Any, limit: int = 4096) -> None:
        self._metric = metric
        self._children: dict[tuple[str, ...], Any] = {}
        self._limit = limit

    def get(self, *values: str) -> Any:
        child = self._children.get(values)
        if child is None:
            if len(self._children) >= self._limit:
                self._children.clear()
            child = self._children[values] = self._metric.labels(*values)
        return child


class RateLimitedLog:
    """Logs a given message key at most once per ``interval`` seconds and counts what it suppressed."""

    def __init__(self, logger: logging.Logger, interval: float = 20.0) -> None:
        self._logger = logger
        self._interval = interval
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def log(self, level: int, key: str, msg: str, *args: object) -> None:
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return
        suppressed = self._suppressed.pop(key, 0)
        self._last[key] = now
        if len(self._last) > 1000:  # bounded: forget the oldest keys
            for old in sorted(self._last, key=self._last.__getitem__)[:500]:
                self._last.pop(old, None)
        if suppressed:
            msg = msg + " (%d similar messages suppressed)"
            args = (*args, suppressed)
        self._logger.log(level, msg, *args)


_T = TypeVar("_T")
_SHARED: weakref.WeakKeyDictionary[CollectorRegistry, dict[Callable[..., Any], Any]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_instruments(registry: CollectorRegistry, build: Callable[[CollectorRegistry], _T]) -> _T:
    """What ``build`` registers on ``registry``, built once per (registry, builder). Components of one type (several
    exporters, Kafka receivers, judges) share their self-metrics: prometheus_client refuses a name twice on one
    registry, and tests get fresh instruments with each new ``Telemetry``."""
    with _SHARED_LOCK:
        built = _SHARED.setdefault(registry, {})
        if build not in built:
            built[build] = build(registry)
        return cast(_T, built[build])
