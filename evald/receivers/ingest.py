"""What both OTLP transports do with a decoded request: convert, hand to the next consumer, count, answer.

``Ingestor(receiver_id, transport, consumer, telemetry)``; ``receiver_id`` is the component id (``otlp``) and
becomes the ``receiver`` label and ``SignalBatch.source``; ``transport`` is ``grpc`` or ``http``. No
configuration keys of its own.

``ingest_traces(request)`` / ``ingest_logs(request)`` return ``(rejected_count, message)`` for the OTLP partial
success (``(0, "")`` means plain success). They are synchronous and must run on the event loop thread that owns
the consumer. ``ingest_body(body, encoding, signal)`` is what the transports call: it decodes (``decode_*``,
pure; in a worker thread for bodies over 1 MiB) and then delivers (``deliver_*``); a body that is not a valid
OTLP request raises ``MalformedRequest``.

Counted on ``telemetry``: ``evald_receiver_accepted_spans_total`` / ``..._log_records_total``;
``evald_receiver_refused_*_total{reason}`` with reason ``invalid_id`` / ``no_trace_id`` (left out by
conversion), ``undecodable`` (an item that cannot be decoded alone, e.g. nested too deep: salvage.py),
``consumer_rejected`` (the window refused them, e.g. trace too large), ``queue_full``, ``wal_full``,
``not_durable``, ``permanent_error``, ``internal_error``; ``evald_receiver_requests_total{outcome}`` with
``success``, ``partial_success``, ``queue_full``, ``wal_full``, ``not_durable``, ``invalid_argument``, ``too_large``,
``unsupported``, ``incomplete``, ``read_timeout`` (HTTP), ``internal_error`` (and ``wrong_protocol``:
wrong_protocol.py).

Durability: when the consumer's ``ConsumeResult.durable`` is set (the ingest role's Kafka producer),
``ingest_body`` answers only after it completes; if it fails with ``QueueFullError`` the request fails the same
way (UNAVAILABLE / 503 with a retry hint) and its items count as ``not_durable``, not as accepted.

Failure semantics: ``QueueFullError`` and ``PermanentError`` from the consumer propagate unchanged (the transport
maps them to UNAVAILABLE+RetryInfo / 503 and INVALID_ARGUMENT / 400); any other exception, from the consumer or
from decoding, is counted (``internal_error``) and raised as ``InternalError`` (INTERNAL / 500, ``kind`` names the
original). Nothing the consumer refused is reported as accepted.

Write-ahead log (``wal``, evald/receivers/wal.py, opt-in): ``ingest_body`` reserves room in the log before handing
the batch over (a full log refuses it: ``QueueFullError``, counted ``wal_full``), gives the batch the log row's
``Delivery`` and, once the window took it, appends the body; the answer waits for that commit (a failed write:
``not_durable``) as for ``ConsumeResult.durable``.

Refusal before decoding: once the consumer refused a batch with ``QueueFullError``, ``ingest_body`` refuses the
transport's next requests with the same error before converting them, for at most ``REFUSAL_HOLD`` seconds (0.1 s)
and only while the window has not shrunk (refusal_hold.py). Under
overload the refused requests no longer cost their conversion (about 90% of a protobuf request's receive cost, all
of a JSON request's). A protobuf body is still parsed, in C, to count its items as refused (``queue_full``), and
one that does not parse is ``MalformedRequest``; a JSON body is not parsed: only the request is counted.

Messages returned to senders go through ``trim``, which also makes them encodable: text echoed from a body (a lone
surrogate from a JSON ``"\\ud800"`` escape) is backslash-escaped instead of failing the answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

from evald.errors import PermanentError, QueueFullError
from evald.interfaces import TraceConsumer
from evald.model import ConsumeResult, Delivery, LogRecord, SignalBatch, SpanRecord
from evald.receivers import wire_logs, wire_traces
from evald.receivers.convert import Converted, convert_logs, convert_traces
from evald.receivers.converted import UNDECODABLE
from evald.receivers.otlp_json import parse_logs_json_salvaging, parse_traces_json_salvaging
from evald.receivers.refusal_hold import RefusalHold
from evald.receivers.responses import MAX_MESSAGE_CHARS as MAX_MESSAGE_CHARS  # the response helpers, re-exported
from evald.receivers.responses import Signal as Signal
from evald.receivers.responses import encodable as encodable
from evald.receivers.responses import export_response as export_response
from evald.receivers.responses import retry_info as retry_info
from evald.receivers.responses import trim as trim
from evald.receivers.salvage import salvage_logs, salvage_traces
from evald.telemetry import Telemetry

if TYPE_CHECKING:
    from evald.receivers.wal import ReceiverWal

Encoding = Literal["protobuf", "json"]
R = TypeVar("R", ExportTraceServiceRequest, ExportLogsServiceRequest)

#: Bodies larger than this are decoded in a worker thread so one big export does not stall the event loop.
OFFLOAD_BYTES = 1024 * 1024


class MalformedRequest(Exception):
    """The body is not a valid OTLP request of the expected type (INVALID_ARGUMENT / 400)."""


class InternalError(Exception):
    """An unexpected error while decoding or delivering, already counted (``internal_error``); ``kind`` is the type
    name of the original exception (its ``__cause__``)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.kind = type(cause).__name__


async def decode_body(body: bytes, encoding: Encoding, signal: Signal) -> Converted[Any]:
    """``decode_traces`` / ``decode_logs`` by ``signal``, in a worker thread when the body is over ``OFFLOAD_BYTES``
    (the transports' requests and the write-ahead log's replay, wal_replay.py)."""
    decode: Callable[[bytes, Encoding], Converted[Any]] = decode_traces if signal == "traces" else decode_logs
    if len(body) > OFFLOAD_BYTES:
        return await asyncio.to_thread(decode, body, encoding)
    return decode(body, encoding)


def signal_batch(signal: Signal, records: tuple[Any, ...], source: str, delivery: Delivery | None = None
                 ) -> SignalBatch:
    """The batch handed to the consumer: ``records`` as spans or log records by ``signal``."""
    return (SignalBatch(spans=records, delivery=delivery, source=source) if signal == "traces"
            else SignalBatch(logs=records, delivery=delivery, source=source))


def decode_traces(body: bytes, encoding: Encoding) -> Converted[SpanRecord]:
    """Parse and convert; ``MalformedRequest`` for a body that is not an ``ExportTraceServiceRequest``. Spans that
    cannot be decoded alone are left out (``undecodable``, salvage.py)."""
    if encoding == "protobuf" and (fast := wire_traces.decode_or_none(body)) is not None:
        return fast  # the same result, read from the wire directly; None: anything unusual, decoded below
    try:
        if encoding == "json":
            request, lost = parse_traces_json_salvaging(body)
        else:
            request, lost = _parse_pb_salvaging(ExportTraceServiceRequest(), body, salvage_traces)
    except ValueError as err:
        raise MalformedRequest(str(err)) from None
    return _with_lost(convert_traces(request), lost)


def decode_logs(body: bytes, encoding: Encoding) -> Converted[LogRecord]:
    if encoding == "protobuf" and (fast := wire_logs.decode_or_none(body)) is not None:
        return fast  # as in decode_traces
    try:
        if encoding == "json":
            request, lost = parse_logs_json_salvaging(body)
        else:
            request, lost = _parse_pb_salvaging(ExportLogsServiceRequest(), body, salvage_logs)
    except ValueError as err:
        raise MalformedRequest(str(err)) from None
    return _with_lost(convert_logs(request), lost)


def _parse_pb_salvaging(message: R, body: bytes, salvage: Callable[[bytes], tuple[R, int] | None]) -> tuple[R, int]:
    try:
        return _parse_pb(message, body), 0
    except ValueError:
        salvaged = salvage(body)
        if salvaged is None:
            raise
        return salvaged


def _with_lost(converted: Converted[Any], lost: int) -> Converted[Any]:
    return Converted(converted.records, {**converted.rejected, UNDECODABLE: lost}) if lost else converted


def _parse_pb(message: R, body: bytes) -> R:
    try:
        message.ParseFromString(body)
    except DecodeError as err:
        raise ValueError(f"cannot decode {message.DESCRIPTOR.name} protobuf: {err}") from None
    return message


def count_items(body: bytes, encoding: Encoding, signal: Signal) -> int:
    """Items in a request without converting it: protobuf is parsed (``MalformedRequest`` if it does not parse); JSON
    is not looked at (0)."""
    if encoding == "json":
        return 0
    if signal == "traces":
        request = _parse_pb_or_malformed(ExportTraceServiceRequest(), body)
        return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    logs = _parse_pb_or_malformed(ExportLogsServiceRequest(), body)
    return sum(len(sl.log_records) for rl in logs.resource_logs for sl in rl.scope_logs)


def _parse_pb_or_malformed(message: R, body: bytes) -> R:
    try:
        return _parse_pb(message, body)
    except ValueError as err:
        raise MalformedRequest(str(err)) from None


class Ingestor:
    def __init__(self, receiver_id: str, transport: str, consumer: TraceConsumer, telemetry: Telemetry,
                 wal: ReceiverWal | None = None) -> None:
        self.receiver_id = receiver_id
        self._wal = wal
        self.transport = transport
        self._consumer = consumer
        self._tm = telemetry
        self._accepted_spans = telemetry.accepted_spans.labels(receiver_id, transport)
        self._accepted_logs = telemetry.accepted_logs.labels(receiver_id, transport)
        self._hold = RefusalHold(consumer)

    async def ingest_body(self, body: bytes, encoding: Encoding, signal: Signal) -> tuple[int, str]:
        """Decode (in a worker thread when over ``OFFLOAD_BYTES``), deliver and wait for ``ConsumeResult.durable``;
        raises ``MalformedRequest``, or ``QueueFullError`` before decoding while the consumer refuses."""
        if (refusal := self._hold.active()) is not None:
            self._refuse(signal, "queue_full", count_items(body, encoding, signal), "queue_full")
            raise refusal
        try:
            converted = await decode_body(body, encoding, signal)
        except MalformedRequest:
            raise
        except Exception as err:
            self.count_request("internal_error")
            raise InternalError(err) from err
        result = self._hand_over(signal, converted, (body, encoding))
        await self._wait_durable(result, signal, len(converted.records) - _rejected(signal, result))
        return self._settle(signal, converted, result)

    def ingest_traces(self, request: ExportTraceServiceRequest) -> tuple[int, str]:
        return self.deliver_traces(convert_traces(request))

    def ingest_logs(self, request: ExportLogsServiceRequest) -> tuple[int, str]:
        return self.deliver_logs(convert_logs(request))

    def deliver_traces(self, converted: Converted[SpanRecord]) -> tuple[int, str]:
        """Hand over and answer; does not wait for ``ConsumeResult.durable`` (``ingest_body`` does)."""
        return self._settle("traces", converted, self._hand_over("traces", converted))

    def deliver_logs(self, converted: Converted[LogRecord]) -> tuple[int, str]:
        return self._settle("logs", converted, self._hand_over("logs", converted))

    async def _wait_durable(self, result: ConsumeResult, signal: Signal, n: int) -> None:
        """Wait until the consumer stored the batch (it bounds the wait); shielded so a client going away does not
        cancel the store. Its ``QueueFullError`` propagates (UNAVAILABLE / 503), counted as ``not_durable``."""
        if result.durable is None:
            return
        try:
            await asyncio.shield(result.durable)
        except QueueFullError:
            self._refuse(signal, "not_durable", n, "not_durable")
            raise
        except Exception as err:
            self._refuse(signal, "internal_error", n, "internal_error")
            raise InternalError(err) from err

    def _hand_over(self, signal: Signal, converted: Converted[Any],
                   raw: tuple[bytes, Encoding] | None = None) -> ConsumeResult:
        self._count_refused(signal, converted.rejected)
        if not converted.records:
            return ConsumeResult()
        records = converted.records
        if self._wal is not None and raw is not None:
            return self._hand_over_logged(self._wal, signal, records, raw)
        return self._consume(signal_batch(signal, records, self.receiver_id), signal, len(records))

    def _hand_over_logged(self, wal: ReceiverWal, signal: Signal, records: tuple[Any, ...],
                          raw: tuple[bytes, Encoding]) -> ConsumeResult:
        """Reserve room in the write-ahead log, hand over with the row's delivery, append the body; the result's
        ``durable`` completes once the row is committed (and once the consumer's own ``durable`` did)."""
        body, encoding = raw
        try:
            entry = wal.admit(len(body))
        except QueueFullError as err:
            self._refuse(signal, "wal_full", len(records), "wal_full")
            self._hold.refused(err)
            raise
        try:
            batch = signal_batch(signal, records, self.receiver_id, entry.delivery)
            result = self._consume(batch, signal, len(records))
        except BaseException:
            wal.abandon(entry)
            raise
        written = wal.append(entry, signal, encoding, body)
        durable = written if result.durable is None else asyncio.ensure_future(_both(written, result.durable))
        return dataclasses.replace(result, durable=durable)

    def _settle(self, signal: Signal, converted: Converted[Any], result: ConsumeResult) -> tuple[int, str]:
        rejected = _rejected(signal, result)
        if rejected:
            self._count_refused(signal, {"consumer_rejected": rejected})
        accepted = self._accepted_spans if signal == "traces" else self._accepted_logs
        accepted.inc(len(converted.records) - rejected)
        noun = "spans" if signal == "traces" else "log records"
        return self._answer(converted.rejected_count + rejected, converted.message(noun), result)

    def count_request(self, outcome: str) -> None:
        """Count a request the transport answered itself (``invalid_argument``, ``too_large``, ...)."""
        self._tm.requests.labels(self.receiver_id, self.transport, outcome).inc()

    def _consume(self, batch: SignalBatch, signal: Signal, n: int) -> ConsumeResult:
        try:
            return self._consumer.consume(batch)
        except QueueFullError as err:
            self._refuse(signal, "queue_full", n, "queue_full")
            self._hold.refused(err)
            raise
        except PermanentError:
            self._refuse(signal, "permanent_error", n, "invalid_argument")
            raise
        except Exception as err:
            self._refuse(signal, "internal_error", n, "internal_error")
            raise InternalError(err) from err

    def _refuse(self, signal: Signal, reason: str, n: int, outcome: str) -> None:
        self._count_refused(signal, {reason: n})
        self.count_request(outcome)

    def _count_refused(self, signal: Signal, rejected: dict[str, int]) -> None:
        counter = self._tm.refused_spans if signal == "traces" else self._tm.refused_logs
        for reason, n in rejected.items():
            counter.labels(self.receiver_id, self.transport, reason).inc(n)

    def _answer(self, rejected: int, conversion_message: str, result: ConsumeResult) -> tuple[int, str]:
        message = "; ".join(m for m in (conversion_message, result.message) if m)
        self.count_request("partial_success" if rejected or message else "success")
        return rejected, trim(message)


async def _both(first: Awaitable[None], second: Awaitable[None]) -> None:
    try:
        await first
    finally:
        await second


def _rejected(signal: Signal, result: ConsumeResult) -> int:
    """What the consumer left out of a batch of ``signal``."""
    return result.rejected_spans if signal == "traces" else result.rejected_logs
