"""``gen_ai.evaluation.result`` events of the OTLP exporter, on a private LoggerProvider (never the global one).

One OTLP log record per score and one per errored evaluation (skipped ones send none), emitted with
``event_name = "gen_ai.evaluation.result"`` (the SDK's ``Logger.emit(event_name=...)``, encoded into the OTLP
``LogRecord.event_name`` field) in the evaluated span's context, so its ``trace_id``/``span_id`` (and the sampled
flag) are the evaluated span's: the convention's "parented to the evaluated span" for an event emitted after
the span ended (standards 1.6).

Attributes: ``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``
(``pass``/``fail``), ``gen_ai.evaluation.explanation`` (the reason, cut at 4096 characters),
``gen_ai.response.id`` when the case knows it, ``error.type`` for an errored evaluation (``timeout``, the
exception class, ``invalid_result``), and ``evald.metric.threshold``, ``evald.metric.dimension``,
``evald.metric.version`` (when known), ``evald.case.scope``.

Queue: the SDK's ``BatchLogRecordProcessor`` evicts its *oldest* record without telling when its deque is full.
To count every loss, ``EvaluationEvents`` keeps its own count of records handed over but not yet taken by the
worker (the exporter wrapper counts what the worker takes) and refuses a new record itself, with reason
``queue_full``, when ``max_queue_size`` are pending; the SDK's deque therefore never overflows. A batch the SDK
exporter gives up on (after its own retries within ``timeout``) is counted as ``send_failed``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource

import evald
from evald.exporters.otlp_support import error_type
from evald.model import ScoredCase

EVENT_NAME = "gen_ai.evaluation.result"
MAX_EXPLANATION = 4096

EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
ERROR_TYPE = "error.type"
THRESHOLD = "evald.metric.threshold"
DIMENSION = "evald.metric.dimension"
VERSION = "evald.metric.version"
SCOPE = "evald.case.scope"

OnDrop = Callable[[str, int], None]


class _CountingExporter(LogRecordExporter):
    """Wraps the SDK's OTLP log exporter: counts what the batch worker takes and what fails to send."""

    def __init__(
        self, inner: LogRecordExporter, on_taken: Callable[[int], None], on_drop: OnDrop, on_sent: Callable[[int], None]
    ) -> None:
        self._inner = inner
        self._on_taken = on_taken
        self._on_drop = on_drop
        self._on_sent = on_sent
        self.closing = False
        self._inner_shut = False
        self._shut_lock = threading.Lock()

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self._on_taken(len(batch))
        try:
            result = self._inner.export(batch)
        except Exception:
            result = LogRecordExportResult.FAILURE
        if result is LogRecordExportResult.SUCCESS:
            self._on_sent(len(batch))
        else:
            self._on_drop("shutdown" if self.closing else "send_failed", len(batch))
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))

    def abort(self) -> None:
        """Shut the inner exporter down now: its retry wait ends, its channel closes; later batches fail fast."""
        self.closing = True
        self.shutdown(0)

    def shutdown(self, timeout_millis: float = 30000) -> None:  # the processor passes what is left of its deadline
        with self._shut_lock:
            if self._inner_shut:
                return
            self._inner_shut = True
        shutdown: Callable[..., None] = self._inner.shutdown
        try:
            shutdown(timeout_millis=timeout_millis)
        except TypeError:  # the HTTP exporter's shutdown takes no timeout
            shutdown()


class EvaluationEvents:
    """Emits evaluation events into a bounded batch processor; ``emit`` never blocks (module docstring)."""

    def __init__(
        self,
        exporter: LogRecordExporter,
        resource: Resource,
        *,
        max_queue_size: int,
        max_export_batch_size: int,
        schedule_delay: float,
        timeout: float,
        on_drop: OnDrop,
        on_sent: Callable[[int], None],
        version_of: Callable[[str], str | None],
    ) -> None:
        self._max_queue = max_queue_size
        self._version_of = version_of
        self._on_drop = on_drop
        self._lock = threading.Lock()
        self._accepted = 0
        self._taken = 0
        self._on_sent = on_sent
        self._resolved = 0  # events the wrapper reported as sent or dropped
        self._settled = False
        self._exporter = _CountingExporter(exporter, self._took, self._dropped_by_worker, self._sent_by_worker)
        self.provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_log_record_processor(BatchLogRecordProcessor(
            self._exporter,
            schedule_delay_millis=schedule_delay * 1000,
            max_export_batch_size=max_export_batch_size,
            export_timeout_millis=timeout * 1000,
            max_queue_size=max_queue_size,
        ))
        self._logger = self.provider.get_logger("evald", getattr(evald, "__version__", None))

    def _sent_by_worker(self, count: int) -> None:
        with self._lock:
            if self._settled:
                return
            self._resolved += count
        self._on_sent(count)

    def _dropped_by_worker(self, reason: str, count: int) -> None:
        with self._lock:
            if self._settled:
                return
            self._resolved += count
        self._on_drop(reason, count)

    def _took(self, count: int) -> None:
        with self._lock:
            if not self._settled:
                self._taken += count

    def pending(self) -> int:
        """Events handed to the batch processor and not yet taken by its worker."""
        with self._lock:
            return self._accepted - self._taken

    def _admit(self) -> bool:
        with self._lock:
            if self._accepted - self._taken >= self._max_queue:
                admitted = False
            else:
                self._accepted += 1
                admitted = True
        if not admitted:
            self._on_drop("queue_full", 1)
        return admitted

    def _emit(self, attributes: dict[str, Any], context: Context | None, severity: SeverityNumber) -> None:
        if self._admit():
            self._logger.emit(
                timestamp=time.time_ns(), context=context or Context(), severity_number=severity,
                attributes=attributes, event_name=EVENT_NAME,
            )

    def emit(self, scored: ScoredCase, context: Context | None) -> None:
        """One event per score and per errored evaluation of ``scored``."""
        case = scored.case
        common: dict[str, Any] = {SCOPE: case.scope}
        response_id = case.metadata.get("response_id")
        if isinstance(response_id, str) and response_id:
            common[RESPONSE_ID] = response_id
        for score in scored.scores:
            attrs: dict[str, Any] = {
                EVALUATION_NAME: score.name, SCORE_VALUE: float(score.value),
                SCORE_LABEL: "pass" if score.passed else "fail", THRESHOLD: float(score.threshold),
                DIMENSION: score.dimension.value, **common,
            }
            if score.reason:
                attrs[EXPLANATION] = score.reason[:MAX_EXPLANATION]
            if (version := self._version_of(score.name)) is not None:
                attrs[VERSION] = version
            self._emit(attrs, context, SeverityNumber.INFO)
        for name, reason in scored.errors:
            attrs = {EVALUATION_NAME: name, ERROR_TYPE: error_type(reason), EXPLANATION: reason[:MAX_EXPLANATION],
                     **common}
            if dimension := scored.metric_dimensions.get(name):
                attrs[DIMENSION] = dimension
            if (version := self._version_of(name)) is not None:
                attrs[VERSION] = version
            self._emit(attrs, context, SeverityNumber.WARN)

    def force_flush(self, timeout_millis: int) -> bool:
        return bool(self.provider.force_flush(timeout_millis))

    def abort(self) -> None:
        """The flush ran out of time: end the SDK exporter's retries so shutdown can finish."""
        self._exporter.abort()

    def settle(self) -> int:
        """After shutdown: how many events were neither confirmed sent nor counted as dropped (still queued, or in
        a request that had not finished). Counting stops here, so a worker thread abandoned at the deadline can
        count nothing twice."""
        with self._lock:
            self._settled = True
            left = self._accepted - self._resolved
            self._resolved = self._taken = self._accepted
        return left

    def shutdown(self, timeout_millis: int) -> None:
        """Events that fail from here on are counted as ``shutdown``. ``LoggerProvider.shutdown`` takes no
        deadline: its worker join is bounded by ``abort()`` and the caller abandons this call at its deadline."""
        self._exporter.closing = True
        self.provider.shutdown()
