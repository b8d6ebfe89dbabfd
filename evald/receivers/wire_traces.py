"""OTLP ``ExportTraceServiceRequest`` body bytes -> ``SpanRecord``s, read from the protobuf wire format directly.

``decode_trace_request(body)`` returns exactly what ``convert_traces(ExportTraceServiceRequest.FromString(body))``
returns (convert.py: same records, field values and types, order, ``rejected`` counts, one shared ``dict`` per
distinct resource with a bounded memo), without building protobuf objects: compiled with mypyc (evald/native.py),
reading attributes from the bytes costs a fraction of reading them through upb's Python API (docs/benchmarks.md,
"Wire decoder"). Field numbers and wire types are the installed opentelemetry-proto's (a test checks them);
undeclared fields are skipped, except in the envelopes (request, ResourceSpans, Resource, ScopeSpans,
InstrumentationScope), where the file reader treats them as "not OTLP".

Failure semantics: it never accepts a body differently from upb. Whatever it is not sure of raises ``Declined``
and the caller decodes the body the old way (protobuf parse, salvage, ``convert_traces``), which gives today's
results and errors: whatever wire.py declines (malformed wire data, invalid UTF-8, merged sub-messages, values
nested deeper than ``MAX_VALUE_DEPTH``...), a singular sub-message field that occurs again (resource, scope,
status), a declared field this module does not read (``Resource.entity_refs``), an enum value outside
0..2**31-1 and a request with no ``resource_spans``. ``decode_or_none`` (what ingest.py and files.py call) returns
None instead, also when this module is not compiled (``enabled``) or the body is not ``bytes``. No config; no I/O.
"""

from __future__ import annotations

import types
from typing import Any, Final

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from evald.model import SpanEvent, SpanRecord, new_span_event, new_span_record
from evald.receivers import wire
from evald.receivers.convert import MAX_CACHED_RESOURCES
from evald.receivers.converted import INVALID_ID, Converted
from evald.receivers.wire import FIXED32, FIXED64, LEN, VARINT, Declined

# (field number << 3) | wire type of every field read; tests/receivers/test_wire_traces.py checks them
REQUEST_RESOURCE_SPANS: Final = 1 << 3 | LEN
RS_RESOURCE: Final = 1 << 3 | LEN
RS_SCOPE_SPANS: Final = 2 << 3 | LEN
RS_SCHEMA_URL: Final = 3 << 3 | LEN
RESOURCE_ATTRIBUTES: Final = 1 << 3 | LEN
RESOURCE_DROPPED: Final = 2 << 3 | VARINT
SS_SCOPE: Final = 1 << 3 | LEN
SS_SPANS: Final = 2 << 3 | LEN
SS_SCHEMA_URL: Final = 3 << 3 | LEN
SCOPE_NAME: Final = 1 << 3 | LEN
SCOPE_VERSION: Final = 2 << 3 | LEN
SCOPE_ATTRIBUTES: Final = 3 << 3 | LEN
SCOPE_DROPPED: Final = 4 << 3 | VARINT
SPAN_TRACE_ID: Final = 1 << 3 | LEN
SPAN_SPAN_ID: Final = 2 << 3 | LEN
SPAN_TRACE_STATE: Final = 3 << 3 | LEN
SPAN_PARENT_SPAN_ID: Final = 4 << 3 | LEN
SPAN_NAME: Final = 5 << 3 | LEN
SPAN_KIND: Final = 6 << 3 | VARINT
SPAN_START: Final = 7 << 3 | FIXED64
SPAN_END: Final = 8 << 3 | FIXED64
SPAN_ATTRIBUTES: Final = 9 << 3 | LEN
SPAN_DROPPED_ATTRIBUTES: Final = 10 << 3 | VARINT
SPAN_EVENTS: Final = 11 << 3 | LEN
SPAN_DROPPED_EVENTS: Final = 12 << 3 | VARINT
SPAN_LINKS: Final = 13 << 3 | LEN
SPAN_DROPPED_LINKS: Final = 14 << 3 | VARINT
SPAN_STATUS: Final = 15 << 3 | LEN
SPAN_FLAGS: Final = 16 << 3 | FIXED32
EVENT_TIME: Final = 1 << 3 | FIXED64
EVENT_NAME: Final = 2 << 3 | LEN
EVENT_ATTRIBUTES: Final = 3 << 3 | LEN
EVENT_DROPPED: Final = 4 << 3 | VARINT
LINK_TRACE_ID: Final = 1 << 3 | LEN
LINK_SPAN_ID: Final = 2 << 3 | LEN
LINK_TRACE_STATE: Final = 3 << 3 | LEN
LINK_ATTRIBUTES: Final = 4 << 3 | LEN
LINK_DROPPED: Final = 5 << 3 | VARINT
LINK_FLAGS: Final = 6 << 3 | FIXED32
STATUS_MESSAGE: Final = 2 << 3 | LEN
STATUS_CODE: Final = 3 << 3 | VARINT

# declared field numbers: such a field reaching the "other" branch has an unexpected wire type (declined)
_SPAN_FIELDS: Final = frozenset(f.number for f in Span.DESCRIPTOR.fields)
_EVENT_FIELDS: Final = frozenset(f.number for f in Span.Event.DESCRIPTOR.fields)
_LINK_FIELDS: Final = frozenset(f.number for f in Span.Link.DESCRIPTOR.fields)
_STATUS_FIELDS: Final = frozenset(f.number for f in Status.DESCRIPTOR.fields)
_ZERO_TRACE: Final = bytes(16)
_ZERO_SPAN: Final = bytes(8)
#: resource body bytes -> attributes, filled only by this module (a hit means these bytes decoded here before)
_resources: Final[dict[bytes, dict[str, Any]]] = {}
_new_record: Final = new_span_record  # Final: C statics when compiled, not lookups by name
_new_event: Final = new_span_event


def compiled() -> bool:
    """Whether this module runs compiled: in pure Python, reading bytes one by one is slower than upb's path."""
    return not isinstance(compiled, types.FunctionType)


#: whether the callers (ingest.py, files.py) take this path: when compiled; in pure Python it costs ~2.5x upb's
enabled: bool = compiled()


def decode_or_none(body: object) -> Converted[SpanRecord] | None:
    """``decode_trace_request(body)``, or None when it declines, is not ``enabled`` or ``body`` is not ``bytes`` (a
    compiled function refuses a bytearray or memoryview argument with TypeError): then decode the old way."""
    if not enabled or type(body) is not bytes:
        return None
    try:
        return decode_trace_request(body)
    except Declined:
        return None


def decode_trace_request(body: bytes) -> Converted[SpanRecord]:
    """Every span of the request with a valid trace id and span id, in request order; ``Declined`` (see above)."""
    out: list[SpanRecord] = []
    invalid = count = pos = 0
    end = len(body)
    while pos < end:
        key, pos = wire.tag(body, pos, end)
        if key != REQUEST_RESOURCE_SPANS:
            raise Declined
        start, pos = wire.length(body, pos, end)
        invalid += _resource_spans(body, start, pos, out)
        count += 1
    if not count:
        raise Declined
    return Converted(tuple(out), {INVALID_ID: invalid} if invalid else {})


def singular(buf: bytes, pos: int, end: int, single: int, repeated: int, schema_url: int) -> tuple[int, int]:
    """Pass 1 over ResourceSpans / ScopeSpans (the resource or scope may follow the lists): (start, stop) of the
    singular sub-message ``single``, (0, 0) when absent; validates the envelope's other fields."""
    start = stop = 0
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == single:
            if stop:  # after a tag: never 0 once set
                raise Declined
            start, pos = wire.length(buf, pos, end)
            stop = pos
        elif key == repeated:
            pos = wire.length(buf, pos, end)[1]
        elif key == schema_url:
            pos = wire.text(buf, pos, end)[1]
        else:
            raise Declined
    return start, stop


def _resource_spans(buf: bytes, pos: int, end: int, out: list[SpanRecord]) -> int:
    """Append the ResourceSpans' valid spans to ``out``; returns how many had invalid ids."""
    start, stop = singular(buf, pos, end, RS_RESOURCE, RS_SCOPE_SPANS, RS_SCHEMA_URL)
    resource = resource_attributes(buf, start, stop) if stop else {}
    invalid = 0
    while pos < end:  # pass 2: every field was checked by pass 1
        key, pos = wire.tag(buf, pos, end)
        start, pos = wire.length(buf, pos, end)
        if key == RS_SCOPE_SPANS:
            invalid += _scope_spans(buf, start, pos, resource, out)
    return invalid


def resource_attributes(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    """A Resource's attributes: one dict per distinct resource (bounded memo, as convert.py); also for wire_logs."""
    key_bytes = buf[pos:end]
    found = _resources.get(key_bytes)
    if found is not None:
        return found
    attributes: dict[str, Any] = {}
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == RESOURCE_ATTRIBUTES:
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, attributes, 0)
        elif key == RESOURCE_DROPPED:
            pos = wire.varint(buf, pos, end)[1]
        else:  # entity_refs (not read) or an unknown field in an envelope
            raise Declined
    if not attributes:  # convert.py: a fresh {} for a resource without attributes, not remembered
        return {}
    if len(_resources) >= MAX_CACHED_RESOURCES:
        _resources.clear()
    _resources[key_bytes] = attributes
    return attributes


def _scope_spans(buf: bytes, pos: int, end: int, resource: dict[str, Any], out: list[SpanRecord]) -> int:
    start, stop = singular(buf, pos, end, SS_SCOPE, SS_SPANS, SS_SCHEMA_URL)
    scope_name, scope_version = scope_fields(buf, start, stop)
    invalid = 0
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        start, pos = wire.length(buf, pos, end)
        if key == SS_SPANS:
            record = _span(buf, start, pos, resource, scope_name, scope_version)
            if record is None:
                invalid += 1
            else:
                out.append(record)
    return invalid


def scope_fields(buf: bytes, pos: int, end: int) -> tuple[str, str]:
    """An InstrumentationScope's (name, version); its attributes are validated, not kept."""
    name = version = ""
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == SCOPE_NAME:
            name, pos = wire.text(buf, pos, end)
        elif key == SCOPE_VERSION:
            version, pos = wire.text(buf, pos, end)
        elif key == SCOPE_ATTRIBUTES:  # not carried, but upb validates them
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, {}, 0)
        elif key == SCOPE_DROPPED:
            pos = wire.varint(buf, pos, end)[1]
        else:
            raise Declined
    return name, version


def _span(buf: bytes, pos: int, end: int, resource: dict[str, Any], scope_name: str, scope_version: str
          ) -> SpanRecord | None:
    """The span, or None when its ids are invalid (convert.py's rule)."""
    trace_id = span_id = parent = b""
    name = status_message = ""
    kind = start_time = end_time = status_code = 0
    attributes: dict[str, Any] = {}
    events: list[SpanEvent] = []
    seen_status = False
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == SPAN_ATTRIBUTES:
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, attributes, 0)
        elif key == SPAN_TRACE_ID:
            start, pos = wire.length(buf, pos, end)
            trace_id = buf[start:pos]
        elif key == SPAN_SPAN_ID:
            start, pos = wire.length(buf, pos, end)
            span_id = buf[start:pos]
        elif key == SPAN_PARENT_SPAN_ID:
            start, pos = wire.length(buf, pos, end)
            parent = buf[start:pos]
        elif key == SPAN_NAME:
            name, pos = wire.text(buf, pos, end)
        elif key == SPAN_KIND:
            kind, pos = wire.enum(buf, pos, end)
        elif key == SPAN_START:
            start_time, pos = wire.fixed64(buf, pos, end)
        elif key == SPAN_END:
            end_time, pos = wire.fixed64(buf, pos, end)
        elif key == SPAN_EVENTS:
            start, pos = wire.length(buf, pos, end)
            events.append(_event(buf, start, pos))
        elif key == SPAN_STATUS:
            if seen_status:
                raise Declined
            seen_status = True
            start, pos = wire.length(buf, pos, end)
            status_code, status_message = _status(buf, start, pos)
        elif key == SPAN_TRACE_STATE:
            pos = wire.text(buf, pos, end)[1]
        elif key == SPAN_LINKS:
            start, pos = wire.length(buf, pos, end)
            _link(buf, start, pos)
        elif key in (SPAN_DROPPED_ATTRIBUTES, SPAN_DROPPED_EVENTS, SPAN_DROPPED_LINKS, SPAN_FLAGS):
            pos = wire.skip(buf, pos, end, key)
        else:
            pos = wire.other(buf, pos, end, key, _SPAN_FIELDS)
    if (len(trace_id) != 16 or len(span_id) != 8 or trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN
            or (parent and len(parent) != 8)):
        return None
    return _new_record(trace_id.hex(), span_id.hex(), parent.hex() if parent and parent != _ZERO_SPAN else None,
                       name, kind, start_time, end_time, attributes, tuple(events) if events else (),
                       status_code, status_message, resource, scope_name, scope_version)


def _event(buf: bytes, pos: int, end: int) -> SpanEvent:
    name = ""
    time = 0
    attributes: dict[str, Any] = {}
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == EVENT_ATTRIBUTES:
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, attributes, 0)
        elif key == EVENT_NAME:
            name, pos = wire.text(buf, pos, end)
        elif key == EVENT_TIME:
            time, pos = wire.fixed64(buf, pos, end)
        elif key == EVENT_DROPPED:
            pos = wire.varint(buf, pos, end)[1]
        else:
            pos = wire.other(buf, pos, end, key, _EVENT_FIELDS)
    return _new_event(name, time, attributes)


def _status(buf: bytes, pos: int, end: int) -> tuple[int, str]:
    code = 0
    message = ""
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key == STATUS_MESSAGE:
            message, pos = wire.text(buf, pos, end)
        elif key == STATUS_CODE:
            code, pos = wire.enum(buf, pos, end)
        else:
            pos = wire.other(buf, pos, end, key, _STATUS_FIELDS)
    return code, message


def _link(buf: bytes, pos: int, end: int) -> None:
    """Links are not carried (convert.py), but upb validates their strings and attributes."""
    while pos < end:
        key, pos = wire.tag(buf, pos, end)
        if key in (LINK_TRACE_ID, LINK_SPAN_ID, LINK_DROPPED, LINK_FLAGS):
            pos = wire.skip(buf, pos, end, key)
        elif key == LINK_TRACE_STATE:
            pos = wire.text(buf, pos, end)[1]
        elif key == LINK_ATTRIBUTES:
            start, pos = wire.length(buf, pos, end)
            wire.key_value(buf, start, pos, {}, 0)
        else:
            pos = wire.other(buf, pos, end, key, _LINK_FIELDS)
