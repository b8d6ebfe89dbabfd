"""OTLP ``ExportLogsServiceRequest`` body bytes -> ``LogRecord``s, read from the protobuf wire format directly.

The log twin of wire_traces.py (read it first): ``decode_logs_request(body)`` returns exactly what
``convert_logs(ExportLogsServiceRequest.FromString(body))`` returns (convert.py: same records, values, types and
order, the same ``rejected`` counts for ``invalid_id`` and ``no_trace_id``, the resource memo shared with the
traces), compiled with mypyc. The envelopes (request, ResourceLogs, Resource, ScopeLogs, InstrumentationScope) are
read by wire_traces' helpers: their field numbers are the traces' (a test checks both against the descriptors).

Failure semantics: as wire_traces.py, it raises ``Declined`` for whatever it is not sure upb reads the same way
(also a second ``body`` in a log record, a negative ``severity_number``, a request with no ``resource_logs``), and
``decode_or_none`` (what ingest.py and files.py call) returns None then, when this module is not compiled
(``enabled``) or the body is not ``bytes``: the caller decodes the body the old way, with today's errors and
salvage. No configuration keys; no I/O.
"""

from __future__ import annotations

import types
from typing import Any, Final

from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto

from evald.model import LogRecord
from evald.receivers import wire, wire_traces
from evald.receivers.converted import INVALID_ID, NO_TRACE_ID, Converted
from evald.receivers.wire import FIXED32, FIXED64, LEN, VARINT, Declined

# (field number << 3) | wire type of every field read; tests/receivers/test_wire_logs.py checks them
REQUEST_RESOURCE_LOGS: Final = 1 << 3 | LEN
RL_RESOURCE: Final = 1 << 3 | LEN
RL_SCOPE_LOGS: Final = 2 << 3 | LEN
RL_SCHEMA_URL: Final = 3 << 3 | LEN
SL_SCOPE: Final = 1 << 3 | LEN
SL_LOG_RECORDS: Final = 2 << 3 | LEN
SL_SCHEMA_URL: Final = 3 << 3 | LEN
LOG_TIME: Final = 1 << 3 | FIXED64
LOG_SEVERITY_NUMBER: Final = 2 << 3 | VARINT
LOG_SEVERITY_TEXT: Final = 3 << 3 | LEN
LOG_BODY: Final = 5 << 3 | LEN
LOG_ATTRIBUTES: Final = 6 << 3 | LEN
LOG_DROPPED: Final = 7 << 3 | VARINT
LOG_FLAGS: Final = 8 << 3 | FIXED32
LOG_TRACE_ID: Final = 9 << 3 | LEN
LOG_SPAN_ID: Final = 10 << 3 | LEN
LOG_OBSERVED_TIME: Final = 11 << 3 | FIXED64
LOG_EVENT_NAME: Final = 12 << 3 | LEN

_LOG_FIELDS: Final = frozenset(f.number for f in LogRecordProto.DESCRIPTOR.fields)
_ZERO_TRACE: Final = bytes(16)
_ZERO_SPAN: Final = bytes(8)
_ACCEPTED: Final = 0
_INVALID: Final = 1
_NO_TRACE: Final = 2
_new_log: Final = LogRecord  # Final: a C static when compiled, not a lookup by name


def compiled() -> bool:
    """Whether this module runs compiled (see wire_traces.compiled)."""
    return not isinstance(compiled, types.FunctionType)


#: whether the callers (ingest.py, files.py) take this path: when compiled
enabled: bool = compiled()


def decode_or_none(body: object) -> Converted[LogRecord] | None:
    """``decode_logs_request(body)``, or None when it declines, is not ``enabled`` or ``body`` is not ``bytes``."""
    if not enabled or type(body) is not bytes:
        return None
    try:
        return decode_logs_request(body)
    except Declined:
        return None


def decode_logs_request(body: bytes) -> Converted[LogRecord]:
    """Every log record of the request that carries a valid trace id, in request order; ``Declined`` (see above)."""
    out: list[LogRecord] = []
    invalid = no_trace = count = pos = 0
    end = len(body)
    while pos < end:
        key, pos = wire.tag(body, pos, end)
        if key != REQUEST_RESOURCE_LOGS:
            raise Declined
        start, pos = wire.length(body, pos, end)
        first, second = _resource_logs(body, start, pos, out)
        invalid += first
        no_trace += second
        count += 1
    if not count:
        raise Declined
    rejected = {k: v for k, v in ((INVALID_ID, invalid), (NO_TRACE_ID, no_trace)) if v}
    return Converted(tuple(out), rejected)


def _resource_logs(buf: bytes, pos: int, end: int, out: list[LogRecord]) -> tuple[int, int]:
    """Append the ResourceLogs' usable records to ``out``: (invalid ids, without trace id)."""
    start, stop = wire_traces.singular(buf, pos, end, RL_RESOURCE, RL_SCOPE_LOGS, RL_SCHEMA_URL)
    resource = wire_traces.resource_attributes(buf, start, stop) if stop else {}
    invalid = no_trace = 0
    while pos < end:  # pass 2: every field was checked by pass 1
        key, pos = wire.tag(buf, pos, end)
        start, pos = wire.length(buf, pos, end)
        if key != RL_SCOPE_LOGS:
            continue
        scope_start, scope_stop = wire_traces.singular(buf, start, pos, SL_SCOPE, SL_LOG_RECORDS, SL_SCHEMA_URL)
        scope_name = wire_traces.scope_fields(buf, scope_start, scope_stop)[0]
        at = start
        while at < pos:
            key, at = wire.tag(buf, at, pos)
            record_start, at = wire.length(buf, at, pos)
            if key == SL_LOG_RECORDS:
                outcome = _record(buf, record_start, at, resource, scope_name, out)
                if outcome == _INVALID:
                    invalid += 1
                elif outcome == _NO_TRACE:
                    no_trace += 1
    return invalid, no_trace


def _record(buf: bytes, pos: int, end: int, resource: dict[str, Any], scope_name: str, out: list[LogRecord]) -> int:
    """Append the log record to ``out`` (``_ACCEPTED``), or say why convert.py leaves it out."""
    trace_id = span_id = b""
    event_name = ""
    time = observed = severity = 0
    attributes: dict[str, Any] = {}
    body: Any = None
    seen_body = False
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == LOG_ATTRIBUTES:
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, attributes, 0)
        elif key == LOG_BODY:
            if seen_body:
                raise Declined
            seen_body = True
            start, pos = wire.length(buf, pos, end)
            body = wire.any_value(buf, start, pos, 0)
        elif key == LOG_TRACE_ID:
            start, pos = wire.length(buf, pos, end)
            trace_id = buf[start:pos]
        elif key == LOG_SPAN_ID:
            start, pos = wire.length(buf, pos, end)
            span_id = buf[start:pos]
        elif key == LOG_EVENT_NAME:
            event_name, pos = wire.text(buf, pos, end)
        elif key == LOG_TIME:
            time, pos = wire.fixed64(buf, pos, end)
        elif key == LOG_OBSERVED_TIME:
            observed, pos = wire.fixed64(buf, pos, end)
        elif key == LOG_SEVERITY_NUMBER:
            severity, pos = wire.enum(buf, pos, end)
        elif key == LOG_SEVERITY_TEXT:
            pos = wire.text(buf, pos, end)[1]
        elif key in (LOG_DROPPED, LOG_FLAGS):
            pos = wire.skip(buf, pos, end, key)
        else:
            pos = wire.other(buf, pos, end, key, _LOG_FIELDS)
    if not trace_id or trace_id == _ZERO_TRACE:
        return _NO_TRACE
    if len(trace_id) != 16 or (span_id and len(span_id) != 8):
        return _INVALID
    if not event_name:
        fallback = attributes.get("event.name")
        event_name = fallback if isinstance(fallback, str) else ""
    out.append(_new_log(trace_id.hex(), span_id.hex() if span_id and span_id != _ZERO_SPAN else None, event_name,
                        time or observed, attributes, body, severity, resource, scope_name))
    return _ACCEPTED
