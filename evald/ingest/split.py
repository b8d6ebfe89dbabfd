"""Per-trace OTLP requests from evald records: what the Collector's Kafka exporter writes with
``partition_traces_by_id``.

``split_spans(spans)`` returns, per trace id (lowercase hex, first-seen order), one ``ExportTraceServiceRequest``
holding only that trace's spans, each under its own resource and scope; ``split_logs(logs)`` does the same for
log records (``ExportLogsServiceRequest``). ``encode(message, encoding)`` serializes for a Kafka record value:
``otlp_proto`` (binary protobuf) or ``otlp_json`` (OTLP/JSON with hex ids, as ``evald.receivers.otlp_json``
reads it). Pure and synchronous; no configuration keys.

The input is what the OTLP receivers produce (``SpanRecord``/``LogRecord``, evald/receivers/convert.py), so the
records keep every field evald reads: ids, parent, name, kind, times, attributes (any ``AnyValue`` shape),
events, status, resource attributes, scope name and version, log body/severity/event name. Not carried (evald's
records have no field for them, and evald does not use them): span links, ``trace_state``, flags, dropped
counts, scope attributes and schema URLs. Spans with invalid ids never get here (the receivers reject them as
partial success). Records sharing a resource (the same ``ResourceSpans`` of the request) share one
``ResourceSpans`` in the output; an attribute value of a type OTLP cannot carry becomes an empty ``AnyValue``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

from evald.model import LogRecord, SpanRecord

Encoding = Literal["otlp_proto", "otlp_json"]
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def set_value(target: AnyValue, value: Any) -> None:
    """Plain Python (as convert.py produces it) -> ``AnyValue``; ``None`` and unknown types stay empty."""
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bool):  # before int: bool is an int
        target.bool_value = value
    elif isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            target.int_value = value
        else:
            target.string_value = str(value)
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, bytes):
        target.bytes_value = value
    elif isinstance(value, (list, tuple)):
        array = target.array_value
        array.SetInParent()
        for item in value:
            set_value(array.values.add(), item)
    elif isinstance(value, Mapping):
        kvlist = target.kvlist_value
        kvlist.SetInParent()
        set_attributes(kvlist.values, value)


def set_attributes(target: Any, attributes: Mapping[str, Any]) -> None:
    """Append ``attributes`` to a ``repeated KeyValue`` field."""
    for key, value in attributes.items():
        kv: KeyValue = target.add()
        kv.key = str(key)
        set_value(kv.value, value)


def split_spans(spans: Iterable[SpanRecord]) -> dict[str, ExportTraceServiceRequest]:
    """One request per trace id (first-seen order) with only that trace's spans, under their resource/scope."""
    requests: dict[str, ExportTraceServiceRequest] = {}
    scopes: dict[tuple[str, int, str, str], ScopeSpans] = {}
    resources: dict[tuple[str, int], ResourceSpans] = {}
    for span in spans:
        request = requests.get(span.trace_id)
        if request is None:
            request = requests[span.trace_id] = ExportTraceServiceRequest()
        # records converted from one ResourceSpans share one resource dict: its identity is the grouping key
        scope_key = (span.trace_id, id(span.resource), span.scope_name, span.scope_version)
        scope = scopes.get(scope_key)
        if scope is None:
            resource_key = (span.trace_id, id(span.resource))
            resource = resources.get(resource_key)
            if resource is None:
                resource = resources[resource_key] = request.resource_spans.add()
                set_attributes(resource.resource.attributes, span.resource)
            scope = scopes[scope_key] = resource.scope_spans.add()
            scope.scope.name = span.scope_name
            scope.scope.version = span.scope_version
        out = scope.spans.add()
        out.trace_id = bytes.fromhex(span.trace_id)
        out.span_id = bytes.fromhex(span.span_id)
        if span.parent_span_id:
            out.parent_span_id = bytes.fromhex(span.parent_span_id)
        out.name = span.name
        out.kind = span.kind  # type: ignore[assignment]
        out.start_time_unix_nano = span.start_time_unix_nano
        out.end_time_unix_nano = span.end_time_unix_nano
        set_attributes(out.attributes, span.attributes)
        for event in span.events:
            ev = out.events.add()
            ev.name = event.name
            ev.time_unix_nano = event.time_unix_nano
            set_attributes(ev.attributes, event.attributes)
        out.status.code = span.status_code  # type: ignore[assignment]
        out.status.message = span.status_message
    return requests


def split_logs(logs: Iterable[LogRecord]) -> dict[str, ExportLogsServiceRequest]:
    """One request per trace id (first-seen order) with only that trace's log records, under their resource/scope."""
    requests: dict[str, ExportLogsServiceRequest] = {}
    scopes: dict[tuple[str, int, str], ScopeLogs] = {}
    resources: dict[tuple[str, int], ResourceLogs] = {}
    for log in logs:
        request = requests.get(log.trace_id)
        if request is None:
            request = requests[log.trace_id] = ExportLogsServiceRequest()
        scope_key = (log.trace_id, id(log.resource), log.scope_name)
        scope = scopes.get(scope_key)
        if scope is None:
            resource_key = (log.trace_id, id(log.resource))
            resource = resources.get(resource_key)
            if resource is None:
                resource = resources[resource_key] = request.resource_logs.add()
                set_attributes(resource.resource.attributes, log.resource)
            scope = scopes[scope_key] = resource.scope_logs.add()
            scope.scope.name = log.scope_name
        out = scope.log_records.add()
        out.trace_id = bytes.fromhex(log.trace_id)
        if log.span_id:
            out.span_id = bytes.fromhex(log.span_id)
        out.event_name = log.event_name
        out.time_unix_nano = log.time_unix_nano
        out.severity_number = log.severity_number  # type: ignore[assignment]
        set_attributes(out.attributes, log.attributes)
        if log.body is not None:
            set_value(out.body, log.body)
    return requests


def encode(message: Message, encoding: Encoding) -> bytes:
    """A record value: binary protobuf, or OTLP/JSON (camelCase, enums as integers, ids as lowercase hex)."""
    if encoding == "otlp_proto":
        return message.SerializeToString()
    from google.protobuf import json_format  # ~30 ms of start-up; only the json encoding needs it

    doc = json_format.MessageToDict(message, use_integers_for_enums=True)
    _hex_ids(doc)
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _hex_ids(doc: dict[str, Any]) -> None:
    """json_format writes bytes as base64; OTLP/JSON wants the ids of spans and log records in hex."""
    for resource in doc.get("resourceSpans", []) + doc.get("resourceLogs", []):
        for scope in resource.get("scopeSpans", []) + resource.get("scopeLogs", []):
            for item in scope.get("spans", []) + scope.get("logRecords", []):
                for key in _ID_KEYS:
                    if key in item:
                        item[key] = base64.b64decode(item[key]).hex()
