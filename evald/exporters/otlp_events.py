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

Queue: events go through the shared sending helper (evald/exporters/sending.py) like every push exporter's
items: :meth:`EvaluationEvents.encode` turns a scored case into one JSON item per event (timestamp, trace and span
id, severity, attributes; bytes, so the persistent queue can store them), and :meth:`EvaluationEvents.build`
turns a batch of items back into SDK log records, emitted through a private LoggerProvider whose processor only
collects them, for the SDK's OTLP log exporter. The SDK's own batch processor is not used.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk.resources import Resource

import evald
from evald.exporters.otlp_support import error_type, ids_context
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

class _Collect(LogRecordProcessor):
    """Collects what the private logger emits (as the SDK's processors hand records to their exporter)."""

    def __init__(self) -> None:
        self.records: list[ReadableLogRecord] = []

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        self.records.append(ReadableLogRecord(
            log_record=log_record.log_record, resource=log_record.resource or Resource.create({}),
            instrumentation_scope=log_record.instrumentation_scope, limits=log_record.limits,
        ))

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class EvaluationEvents:
    """Encodes evaluation events as queue items and rebuilds them as SDK log records (module docstring)."""

    def __init__(self, resource: Resource, *, version_of: Callable[[str], str | None]) -> None:
        self._version_of = version_of
        self._collect = _Collect()
        self.provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_log_record_processor(self._collect)
        self._logger = self.provider.get_logger("evald", getattr(evald, "__version__", None))

    def encode(self, scored: ScoredCase) -> list[bytes]:
        """One queue item per score and per errored evaluation of ``scored`` (JSON)."""
        case = scored.case
        head = {"ts": time.time_ns(), "trace": case.trace_id or "", "span": case.span_id or ""}
        common: dict[str, Any] = {SCOPE: case.scope}
        response_id = case.metadata.get("response_id")
        if isinstance(response_id, str) and response_id:
            common[RESPONSE_ID] = response_id
        items: list[bytes] = []
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
            items.append(_item(head, SeverityNumber.INFO, attrs))
        for name, reason in scored.errors:
            attrs = {EVALUATION_NAME: name, ERROR_TYPE: error_type(reason), EXPLANATION: reason[:MAX_EXPLANATION],
                     **common}
            if dimension := scored.metric_dimensions.get(name):
                attrs[DIMENSION] = dimension
            if (version := self._version_of(name)) is not None:
                attrs[VERSION] = version
            items.append(_item(head, SeverityNumber.WARN, attrs))
        return items

    def build(self, batch: Sequence[bytes]) -> list[ReadableLogRecord]:
        """SDK log records of queued items (an item that does not decode is skipped: it cannot be sent)."""
        self._collect.records = []
        for raw in batch:
            try:
                item = json.loads(raw)
                context = ids_context(str(item["trace"]), str(item["span"]))
                self._logger.emit(timestamp=int(item["ts"]), context=context or Context(),
                                  severity_number=SeverityNumber(int(item["sev"])), attributes=dict(item["attrs"]),
                                  event_name=EVENT_NAME)
            except (ValueError, KeyError, TypeError):
                continue
        records, self._collect.records = self._collect.records, []
        return records


def _item(head: dict[str, Any], severity: SeverityNumber, attrs: dict[str, Any]) -> bytes:
    return json.dumps({**head, "sev": severity.value, "attrs": attrs}, separators=(",", ":")).encode()
