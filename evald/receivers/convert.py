"""OTLP protobuf -> evald records: ``ExportTraceServiceRequest`` -> ``SpanRecord``s, logs -> ``LogRecord``s.

Pure and synchronous (no I/O, no clock, no telemetry; its only state is the bounded resource memo below): both
transports and the file reader share it, and it is on the hot path, so a non-empty string value is read directly,
other values are dispatched with ``WhichOneof``, and resource attributes are converted once per distinct resource.

Conversion rules:

* ``AnyValue`` -> plain Python: string, bool, int, float, bytes (kept as bytes, whatever they contain),
  ``array_value`` -> ``list``, ``kvlist_value`` -> ``dict`` (last duplicate key wins), unset or
  ``string_value_strindex`` (profiles only) -> ``None``.
* Ids -> lowercase hex (trace 32 chars, span 16). An all-zero or empty ``parent_span_id`` means "root" (None).
* Resource attributes and the scope name/version are flattened into every record: one ``dict`` per distinct
  resource, shared by its records (read-only for everyone downstream) and by later requests that carry the same
  resource (a bounded memo keyed by the resource's encoded bytes: a fleet sends the same few resources over and
  over, and converting them again was ~5% of evald's CPU per span). Span links are not carried
  (``SpanRecord`` has no field for them) and their ids are not validated. Log ``event_name`` comes from the
  proto field, else from a string attribute ``event.name``; the time is ``time_unix_nano``, else
  ``observed_time_unix_nano``.

Failure semantics: nothing raises on bad data. An item that cannot be used is left out and counted in
``Converted.rejected`` by reason, which the caller reports as OTLP partial success:

* ``invalid_id``: a span whose trace_id is not 16 bytes or span_id not 8 bytes, or either is all zeros, or
  whose parent_span_id is neither empty nor 8 bytes; a log record with a malformed trace_id/span_id.
* ``no_trace_id``: a log record without a trace id (evald only evaluates log records parented to a span).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from evald.model import LogRecord, SpanRecord, new_span_event, new_span_record
from evald.receivers.converted import INVALID_ID, NO_TRACE_ID, REASONS, Converted

__all__ = ["INVALID_ID", "NO_TRACE_ID", "REASONS", "Converted", "any_value", "attributes", "convert_logs",
           "convert_traces", "count_spans", "resource_attributes"]

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)
_SCALARS = frozenset({"string_value", "bool_value", "int_value", "double_value", "bytes_value"})
#: distinct resources remembered (encoded bytes -> attributes); cleared when full, so a flood costs no memory
MAX_CACHED_RESOURCES = 256
_resources: dict[bytes, dict[str, Any]] = {}


def any_value(value: AnyValue) -> Any:
    """One OTLP ``AnyValue`` as plain Python (see the module docstring)."""
    kind = value.WhichOneof("value")
    if kind in _SCALARS:
        return getattr(value, kind)
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    return None


def attributes(kvs: Iterable[KeyValue]) -> dict[str, Any]:
    """OTLP ``repeated KeyValue`` -> ``dict`` (the last of duplicate keys wins)."""
    out: dict[str, Any] = {}
    for kv in kvs:
        value = kv.value
        text = value.string_value  # most values are non-empty strings: one read instead of WhichOneof + getattr
        if text:
            out[kv.key] = text
            continue
        kind = value.WhichOneof("value")
        # inlined scalar case: most attributes are scalars and a call per attribute is a visible cost here
        out[kv.key] = getattr(value, kind) if kind in _SCALARS else any_value(value)
    return out


def resource_attributes(resource: Resource) -> dict[str, Any]:
    """``attributes(resource.attributes)``, converted once per distinct resource (see the module docstring)."""
    if not resource.attributes:
        return {}
    key = resource.SerializeToString()
    found = _resources.get(key)
    if found is None:
        if len(_resources) >= MAX_CACHED_RESOURCES:
            _resources.clear()
        found = _resources[key] = attributes(resource.attributes)
    return found


def convert_traces(request: ExportTraceServiceRequest) -> Converted[SpanRecord]:
    """Every span of the request with a valid trace id and span id, in request order."""
    out: list[SpanRecord] = []
    append = out.append
    invalid = 0
    for resource_spans in request.resource_spans:
        resource = resource_attributes(resource_spans.resource)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            scope_name = scope.name
            scope_version = scope.version
            for span in scope_spans.spans:
                trace_id = span.trace_id
                span_id = span.span_id
                parent = span.parent_span_id
                if (
                    len(trace_id) != 16
                    or len(span_id) != 8
                    or trace_id == _ZERO_TRACE
                    or span_id == _ZERO_SPAN
                    or (parent and len(parent) != 8)
                ):
                    invalid += 1
                    continue
                events = span.events
                status = span.status
                append(
                    new_span_record(
                        trace_id=trace_id.hex(),
                        span_id=span_id.hex(),
                        parent_span_id=parent.hex() if parent and parent != _ZERO_SPAN else None,
                        name=span.name,
                        kind=span.kind,
                        start_time_unix_nano=span.start_time_unix_nano,
                        end_time_unix_nano=span.end_time_unix_nano,
                        attributes=attributes(span.attributes),
                        events=tuple(
                            new_span_event(ev.name, ev.time_unix_nano, attributes(ev.attributes)) for ev in events
                        )
                        if events
                        else (),
                        status_code=status.code,
                        status_message=status.message,
                        resource=resource,
                        scope_name=scope_name,
                        scope_version=scope_version,
                    )
                )
    return Converted(tuple(out), {INVALID_ID: invalid} if invalid else {})


def convert_logs(request: ExportLogsServiceRequest) -> Converted[LogRecord]:
    """Every log record of the request that carries a valid trace id, in request order."""
    out: list[LogRecord] = []
    invalid = 0
    no_trace = 0
    for resource_logs in request.resource_logs:
        resource = resource_attributes(resource_logs.resource)
        for scope_logs in resource_logs.scope_logs:
            scope_name = scope_logs.scope.name
            for rec in scope_logs.log_records:
                trace_id = rec.trace_id
                span_id = rec.span_id
                if not trace_id or trace_id == _ZERO_TRACE:
                    no_trace += 1
                    continue
                if len(trace_id) != 16 or (span_id and len(span_id) != 8):
                    invalid += 1
                    continue
                attrs = attributes(rec.attributes)
                event_name = rec.event_name
                if not event_name:
                    fallback = attrs.get("event.name")
                    event_name = fallback if isinstance(fallback, str) else ""
                out.append(
                    LogRecord(
                        trace_id=trace_id.hex(),
                        span_id=span_id.hex() if span_id and span_id != _ZERO_SPAN else None,
                        event_name=event_name,
                        time_unix_nano=rec.time_unix_nano or rec.observed_time_unix_nano,
                        attributes=attrs,
                        body=any_value(rec.body) if rec.HasField("body") else None,
                        severity_number=rec.severity_number,
                        resource=resource,
                        scope_name=scope_name,
                    )
                )
    rejected = {k: v for k, v in ((INVALID_ID, invalid), (NO_TRACE_ID, no_trace)) if v}
    return Converted(tuple(out), rejected)


def count_spans(request: ExportTraceServiceRequest) -> int:
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


def count_logs(request: ExportLogsServiceRequest) -> int:
    return sum(len(sl.log_records) for rl in request.resource_logs for sl in rl.scope_logs)
