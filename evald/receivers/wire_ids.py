"""The trace ids of an OTLP protobuf request, read without decoding it: what ``evald replay`` reads ahead.

``trace_ids(body, logs=False)`` returns the hex of every ``trace_id`` field of every span of an
``ExportTraceServiceRequest`` (or the wire-identical ``TracesData``), or, with ``logs=True``, of every log record of
an ``ExportLogsServiceRequest``; everything else is skipped by its length. It is a superset of the trace ids the
decoders (wire_traces.py, wire_logs.py, or protobuf + convert.py) produce from the same body: it also holds the ids
of records they reject (an id of the wrong length; an empty one as ``""``) and every occurrence of a
repeated ``trace_id`` field, of which protobuf keeps the last.

Compiled with mypyc (evald/native.py), ``scan`` walks the body with wire.py's primitives (13 ms for 20k spans);
not compiled, ``trace_ids`` parses it with protobuf instead (57 ms, against 137 ms for the interpreted walk).
Failure semantics: a body wire.py is not sure of (truncated, groups, a malformed varint...), or protobuf refuses,
gives ``None``: nothing is known about that input. No config; no I/O.
"""

from __future__ import annotations

import types
from typing import Final

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.receivers import wire
from evald.receivers.wire import LEN, Declined

#: (field number << 3) | wire type; the same numbers for traces and logs down to the records (a test checks them)
REQUEST_RESOURCES: Final = 1 << 3 | LEN  # resource_spans / resource_logs
RESOURCE_SCOPES: Final = 2 << 3 | LEN  # scope_spans / scope_logs
SCOPE_RECORDS: Final = 2 << 3 | LEN  # spans / log_records
SPAN_TRACE_ID: Final = 1 << 3 | LEN
LOG_TRACE_ID: Final = 9 << 3 | LEN


def trace_ids(body: bytes, logs: bool = False) -> set[str] | None:
    """Every trace id in ``body`` (a superset of what decoding it gives), or None when it cannot be read."""
    return scan(body, logs) if _COMPILED else _parsed(body, logs)


def compiled() -> bool:
    """Whether this module runs compiled (then its walk is the faster read)."""
    return not isinstance(compiled, types.FunctionType)


_COMPILED: Final = compiled()


def _parsed(body: bytes, logs: bool) -> set[str] | None:
    """The trace ids protobuf parses from ``body`` (exactly the decoders' ids, before their id checks)."""
    try:
        if logs:
            request = ExportLogsServiceRequest.FromString(body)
            return {r.trace_id.hex() for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records}
        traces = ExportTraceServiceRequest.FromString(body)
        return {s.trace_id.hex() for rs in traces.resource_spans for ss in rs.scope_spans for s in ss.spans}
    except Exception:  # noqa: BLE001 - DecodeError, RecursionError...: not readable, nothing known
        return None


def scan(body: bytes, logs: bool = False) -> set[str] | None:
    """``trace_ids`` by walking the wire format (what runs compiled)."""
    ids: set[str] = set()
    try:
        _nested(body, 0, len(body), 0, LOG_TRACE_ID if logs else SPAN_TRACE_ID, ids)
    except Declined:
        return None
    return ids


def _nested(buf: bytes, pos: int, end: int, level: int, id_key: int, ids: set[str]) -> None:
    """Level 0: the request, 1: a resource's records, 2: a scope's records, 3: a span or log record."""
    wanted = REQUEST_RESOURCES if level == 0 else RESOURCE_SCOPES if level == 1 else SCOPE_RECORDS
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if level == 3:
            if key == id_key:
                start, pos = wire.length(buf, pos, end)
                ids.add(buf[start:pos].hex())
            else:
                pos = wire.skip(buf, pos, end, key)
        elif key == wanted:
            start, pos = wire.length(buf, pos, end)
            _nested(buf, start, pos, level + 1, id_key, ids)
        else:
            pos = wire.skip(buf, pos, end, key)
