"""One span (or log record) that cannot be decoded costs only itself, not its whole request.

Where depth is limited: not in convert.py (its ``any_value`` recursion is bounded only by what was decoded), but by
the decoders: protobuf's C decoder (upb) refuses a message nested more than 100 levels, and ``json_format.ParseDict``
refuses the same (``max_recursion_depth=100``). A request is 5 levels above an attribute value and each nested
array or kvlist adds 2, so one value nested ~48 deep used to make the whole request undecodable (400), losing every
other span in it.

``salvage_traces(body)`` / ``salvage_logs(body)`` run only when the protobuf request failed to parse. They read the
request again with a shallow schema in which each span / log record stays raw bytes (``ShallowTraceRequest``, wire
compatible), then decode each item inside a one-item request with its own resource and scope, at the same depth as
in the original, so the limit is the same one. What decodes is returned as one ``Export*ServiceRequest``; what
does not is counted as ``undecodable`` and becomes OTLP partial success. If the shallow read fails too (the damage is
outside the items), or no item decodes (a broken resource or scope), they return None and the request stays
malformed.

``salvage_json(doc, items_key)`` does the same for OTLP/JSON after ``ParseDict`` failed with "too deep": it drops
each span / log record that cannot be parsed alone (with ``max_recursion_depth`` at the same effective depth) and
returns how many it dropped. Other JSON errors in an item still fail the whole request (unchanged).

No configuration keys. Pure, no I/O.
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

R = TypeVar("R", ExportTraceServiceRequest, ExportLogsServiceRequest)


def _shallow_types() -> dict[str, type[Message]]:
    """Request -> resource list -> scope list -> items, with resource, scope and items as raw bytes."""
    file = descriptor_pb2.FileDescriptorProto(name="evald_shallow_otlp.proto", package="evald.shallow",
                                              syntax="proto3")
    bytes_, string, message = (descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                               descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                               descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE)
    optional, repeated = (descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                          descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
    for kind in ("Trace", "Logs"):
        scope = file.message_type.add(name=f"Scope{kind}")
        scope.field.add(name="scope", number=1, type=bytes_, label=optional)
        scope.field.add(name="items", number=2, type=bytes_, label=repeated)
        scope.field.add(name="schema_url", number=3, type=string, label=optional)
        resource = file.message_type.add(name=f"Resource{kind}")
        resource.field.add(name="resource", number=1, type=bytes_, label=optional)
        resource.field.add(name="scopes", number=2, type=message, label=repeated,
                           type_name=f".evald.shallow.Scope{kind}")
        resource.field.add(name="schema_url", number=3, type=string, label=optional)
        request = file.message_type.add(name=f"{kind}Request")
        request.field.add(name="resources", number=1, type=message, label=repeated,
                          type_name=f".evald.shallow.Resource{kind}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"evald.shallow.{name}"))
            for name in ("TraceRequest", "ResourceTrace", "ScopeTrace", "LogsRequest", "ResourceLogs", "ScopeLogs")}


_TYPES = _shallow_types()


def salvage_traces(body: bytes) -> tuple[ExportTraceServiceRequest, int] | None:
    """The decodable spans of a request that did not parse, and how many were not; None if it is not salvageable."""
    return _salvage(body, "Trace", ExportTraceServiceRequest)


def salvage_logs(body: bytes) -> tuple[ExportLogsServiceRequest, int] | None:
    return _salvage(body, "Logs", ExportLogsServiceRequest)


def _salvage(body: bytes, kind: str, real: type[R]) -> tuple[R, int] | None:
    shallow = _TYPES[f"{kind}Request"]()
    try:
        shallow.ParseFromString(body)
    except DecodeError:
        return None
    out, lost = real(), 0
    resource_type, scope_type, request_type = (_TYPES[f"Resource{kind}"], _TYPES[f"Scope{kind}"],
                                               _TYPES[f"{kind}Request"])
    for resource in shallow.resources:  # type: ignore[attr-defined]
        for scope in resource.scopes:
            for item in scope.items:
                one = request_type(resources=[resource_type(
                    resource=resource.resource, schema_url=resource.schema_url,
                    scopes=[scope_type(scope=scope.scope, items=[item], schema_url=scope.schema_url)])])
                try:
                    out.MergeFrom(real.FromString(one.SerializeToString()))  # a failed parse may leave half a merge
                except DecodeError:
                    lost += 1
    decoded = sum(len(ss.spans) for rs in out.resource_spans for ss in rs.scope_spans) \
        if isinstance(out, ExportTraceServiceRequest) else \
        sum(len(sl.log_records) for rl in out.resource_logs for sl in rl.scope_logs)
    return (out, lost) if lost and decoded else None  # none lost or none decoded: the request itself is malformed


def salvage_json(doc: dict[str, Any], message: Message, lists: tuple[str, str, str]) -> int:
    """Drop from ``doc`` (in place) each item that does not parse alone; how many were dropped.

    ``lists``: the keys of the resource list, scope list and item list (``resourceSpans``, ``scopeSpans``,
    ``spans``); an item is parsed inside a copy of its resource and scope so its depth is the same."""
    resources_key, scopes_key, items_key = lists
    lost = 0
    for resource in _dicts(doc.get(resources_key)):
        for scope in _dicts(resource.get(scopes_key)):
            items = scope.get(items_key)
            if not isinstance(items, list):
                continue
            kept = []
            for item in items:
                alone = {resources_key: [{**resource, scopes_key: [{**scope, items_key: [item]}]}]}
                try:
                    json_format.ParseDict(alone, type(message)(), ignore_unknown_fields=True)
                except json_format.ParseError as err:
                    if "too deep" not in str(err):
                        raise
                    lost += 1
                    continue
                kept.append(item)
            scope[items_key] = kept
    return lost


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
