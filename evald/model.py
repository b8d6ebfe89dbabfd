"""Records that flow between pipeline stages (frozen, slotted dataclasses; no protobuf beyond receivers/).

Attribute values are plain Python: ``str | bool | int | float | bytes | list | dict`` (OTLP ``kvlist`` becomes
``dict``, ``array`` becomes ``list``). Ids are lowercase hex strings: 32 chars for a trace, 16 for a span.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evald import span_reads
from evald.case import EvalCase, Score
from evald.frozen import constructor, fast_init

Attributes = Mapping[str, Any]

STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2


@fast_init
@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time_unix_nano: int
    attributes: Attributes


@fast_init
@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One ended span, with its resource and scope flattened in."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_time_unix_nano: int
    end_time_unix_nano: int
    attributes: Attributes
    events: tuple[SpanEvent, ...] = ()
    status_code: int = STATUS_UNSET
    status_message: str = ""
    resource: Attributes = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""

    # one definition each, in evald/span_reads.py (compiled; the mappers call those functions directly)
    @property
    def is_root(self) -> bool:
        return span_reads.is_root(self)

    @property
    def duration_ms(self) -> float | None:
        return span_reads.duration_ms(self)

    @property
    def service_name(self) -> str | None:
        return span_reads.service_name(self)


@fast_init
@dataclass(frozen=True, slots=True)
class LogRecord:
    """One OTLP log record (GenAI events arrive as these), joined to its span by ``trace_id``/``span_id``."""

    trace_id: str
    span_id: str | None
    event_name: str
    time_unix_nano: int
    attributes: Attributes
    body: Any = None
    severity_number: int = 0
    resource: Attributes = field(default_factory=dict)
    scope_name: str = ""


@fast_init
@dataclass(frozen=True, slots=True)
class AssembledTrace:
    """Every span and log record of one trace that arrived before it was released."""

    trace_id: str
    spans: tuple[SpanRecord, ...]
    logs: tuple[LogRecord, ...] = ()
    complete: bool = True  # False when released at decision_wait without a root span, or truncated
    truncated: bool = False
    #: 1 for the first release; n > 1 when late spans reopened the trace (its cases supersede revision n - 1)
    revision: int = 1

    def logs_for(self, span_id: str) -> tuple[LogRecord, ...]:
        return tuple(log for log in self.logs if log.span_id == span_id)


class Delivery:
    """Acknowledgement of one batch a source delivered.

    Every stage that holds work derived from the batch calls :meth:`hold` and later :meth:`release`. When the
    count returns to zero the source's ``on_done`` callback runs once: everything derived from the batch was
    exported or deliberately dropped and counted. The Kafka source commits offsets there; an OTLP receiver with a
    write-ahead log deletes the request's row there (evald/receivers/wal.py); without one, OTLP ignores it.
    """

    __slots__ = ("_pending", "_on_done", "_done")

    def __init__(self, on_done: Callable[[], None] | None = None) -> None:
        self._pending = 1  # the source's own hold, released by ``seal()``
        self._on_done = on_done
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def hold(self) -> None:
        self._pending += 1

    def release(self) -> None:
        self._pending -= 1
        if self._pending <= 0 and not self._done:
            self._done = True
            if self._on_done is not None:
                self._on_done()

    def seal(self) -> None:
        """Called by the source once it has handed the batch on."""
        self.release()


@dataclass(frozen=True, slots=True)
class SignalBatch:
    """What a source hands to the pipeline: spans and/or log records of one request or poll."""

    spans: tuple[SpanRecord, ...] = ()
    logs: tuple[LogRecord, ...] = ()
    delivery: Delivery | None = None
    source: str = "otlp"


@dataclass(frozen=True, slots=True)
class ConsumeResult:
    """How many items of a batch were rejected (OTLP partial success) and why.

    ``durable`` (set by consumers that store the batch elsewhere, e.g. the ingest role's Kafka producer): a future
    that completes once the accepted items are durably stored, or fails with ``QueueFullError``. The OTLP
    receivers answer only after it completes (evald/receivers/ingest.py); the consumer bounds its duration.
    """

    rejected_spans: int = 0
    rejected_logs: int = 0
    message: str = ""
    durable: asyncio.Future[None] | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class ScoredCase:
    """A case with every score it received. ``errors``/``skipped`` list metric kinds with a short reason."""

    case: EvalCase
    scores: tuple[Score, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    errors: tuple[tuple[str, str], ...] = ()
    metric_dimensions: Mapping[str, str] = field(default_factory=dict)

    @property
    def trace_id(self) -> str:
        return self.case.trace_id

    @property
    def span_id(self) -> str | None:
        return self.case.span_id

    def to_json_line(self) -> dict[str, Any]:
        """The replay ``--output`` record (documented in docs/replay-format.md)."""
        return {
            "trace_id": self.case.trace_id,
            "span_id": self.case.span_id,
            "scope": self.case.scope,
            "service_name": self.case.service_name,
            "case": self.case.to_dict(),
            "scores": [
                {k: v for k, v in s.to_dict().items() if k != "metadata"} for s in self.scores
            ],
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "errors": [{"name": n, "reason": r} for n, r in self.errors],
        }


#: the records' constructors as plain functions (``evald.frozen.constructor``), for the hot paths
new_span_event = constructor(SpanEvent)
new_span_record = constructor(SpanRecord)
new_assembled_trace = constructor(AssembledTrace)
new_scored_case = constructor(ScoredCase)
