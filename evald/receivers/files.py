"""Read captured OTLP files (``evald replay``): ``read_signal_file(path) -> SignalBatch``.

By name: ``*.logs.pb`` binary ``ExportLogsServiceRequest``; ``*.logs.json`` its OTLP/JSON form; other ``*.pb``
binary ``ExportTraceServiceRequest`` (or the wire-identical ``TracesData``); other ``*.json`` OTLP/JSON traces.
No configuration keys. The batch has ``source="file"`` and no ``Delivery``.

Failure semantics: ``OSError`` when the file cannot be read; ``EvaldError`` with the file name and a reason when it
is not such a file: another suffix, undecodable protobuf or JSON, no ``resourceSpans``/``resourceLogs``, unknown
fields in the request/resource/scope envelopes (what random bytes that happen to parse as protobuf look like), or
no usable span / log record at all. Individual spans with invalid ids are left out, like the receivers do.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.errors import EvaldError
from evald.model import SignalBatch
from evald.receivers import wire_logs, wire_traces
from evald.receivers.convert import REASONS, Converted, convert_logs, convert_traces
from evald.receivers.otlp_json import parse_logs_json, parse_traces_json

SOURCE = "file"
M = TypeVar("M", bound=Message)


class NotOtlpDocumentError(EvaldError):
    """A well-formed file that holds no OTLP request (another JSON document, an empty request): ``evald replay``
    notes it when a directory walk found it (a manifest beside the traces), and fails on it when it was named."""


def read_signal_file(path: Path) -> SignalBatch:
    path = Path(path)
    name = path.name.lower()
    logs = name.endswith((".logs.pb", ".logs.json"))
    if name.endswith(".pb"):
        binary = True
    elif name.endswith(".json"):
        binary = False
    else:
        raise EvaldError(f"{path.name}: not an OTLP file (expected .pb, .json, .logs.pb or .logs.json)")
    data = path.read_bytes()
    kind = "ExportLogsServiceRequest" if logs else "ExportTraceServiceRequest"
    what = f"{path.name}: not {'a binary' if binary else 'an OTLP/JSON'} {kind}"
    if logs:
        if binary and (fast_logs := wire_logs.decode_or_none(data)) is not None:  # None: decoded below
            _require_records(fast_logs, "log records", what)
            return SignalBatch(logs=fast_logs.records, source=SOURCE)
        log_request = _parse(ExportLogsServiceRequest(), data, what) if binary else _json(parse_logs_json, data, what)
        if not log_request.resource_logs:
            raise NotOtlpDocumentError(f"{what} (no resourceLogs)")
        if binary:
            _no_unknown_envelopes(log_request, "resource_logs", "scope_logs", what)
        converted_logs = convert_logs(log_request)
        _require_records(converted_logs, "log records", what)
        return SignalBatch(logs=converted_logs.records, source=SOURCE)
    if binary and (fast := wire_traces.decode_or_none(data)) is not None:  # None: decoded below, with its errors
        _require_records(fast, "spans", what)
        return SignalBatch(spans=fast.records, source=SOURCE)
    trace_request = _parse(ExportTraceServiceRequest(), data, what) if binary else _json(parse_traces_json, data, what)
    if not trace_request.resource_spans:
        raise NotOtlpDocumentError(f"{what} (no resourceSpans)")
    if binary:
        _no_unknown_envelopes(trace_request, "resource_spans", "scope_spans", what)
    converted_spans = convert_traces(trace_request)
    _require_records(converted_spans, "spans", what)
    return SignalBatch(spans=converted_spans.records, source=SOURCE)


def _parse(message: M, data: bytes, what: str) -> M:
    try:
        message.ParseFromString(data)
    except DecodeError as err:
        raise EvaldError(f"{what} ({err})") from None
    return message


def _json(parse: Callable[[bytes], M], data: bytes, what: str) -> M:
    try:
        return parse(data)
    except ValueError as err:
        raise EvaldError(f"{what} ({err})") from None


def _no_unknown_envelopes(request: Message, resources: str, scopes: str, what: str) -> None:
    """Unknown fields in the envelopes (not in spans, where newer OTLP versions add fields) mean "not OTLP"."""
    envelopes: list[Message] = [request]
    for resource in getattr(request, resources):
        envelopes += [resource, resource.resource]
        for scope in getattr(resource, scopes):
            envelopes += [scope, scope.scope]
    for message in envelopes:
        if len(UnknownFieldSet(message)):
            raise EvaldError(f"{what} (unknown fields in {message.DESCRIPTOR.name})")


def _require_records(converted: Converted[Any], noun: str, what: str) -> None:
    if converted.records:
        return
    if converted.rejected:
        reasons = "; ".join(f"{n} {reason}: {REASONS.get(reason, reason)}" for reason, n in converted.rejected.items())
        raise EvaldError(f"{what} (no usable {noun}: {reasons})")
    raise EvaldError(f"{what} (it holds no {noun})")
