"""OTLP/JSON <-> the OTLP protobuf messages (the JSON side of OTLP/HTTP, JSON capture files, Kafka ``otlp_json``).

OTLP/JSON is the proto3 JSON mapping with deviations (opentelemetry-proto ``docs/specification.md``): trace and
span ids are case-insensitive **hex** strings, not base64; enums are integers; 64-bit integers may be strings
or numbers; unknown fields are ignored. ``json_format`` handles everything but the ids, so the decoded document
is walked first and ``traceId``/``spanId``/``parentSpanId`` (of spans, span links and log records) are
re-encoded as base64 before ``json_format.ParseDict(..., ignore_unknown_fields=True)``.

Failure semantics:

* An id that is not a hex string is replaced by a one-byte id, so ``convert.py`` rejects that one span or log
  record as ``invalid_id`` (partial success) instead of failing the whole request.
* A body that is not JSON, not a JSON object, or does not fit the message (e.g. ``"resourceSpans": 3``) raises
  ``ValueError`` with a message fit to return to the sender. That includes a string that is not valid Unicode: a
  lone surrogate escape (``"\\ud800"``) is valid JSON, but protobuf strings must be UTF-8; in a field name or an
  enum name, protobuf's C decoder fails on it with ``SystemError`` (from its ``UnicodeEncodeError``), which is
  reported as such a ``ValueError`` too (not an internal error).
* ``parse_*_json_salvaging`` (the OTLP/HTTP receiver's): a span or log record nested too deep to parse is left out
  and counted instead of failing the request (salvage.py); ``parse_*_json`` stay strict.

No configuration keys.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.receivers.salvage import salvage_json

M = TypeVar("M", bound=Message)

#: base64 of one zero byte: an id of the wrong length, rejected downstream as ``invalid_id``.
_INVALID_ID = "AA=="
_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def parse_traces_json(data: bytes | str) -> ExportTraceServiceRequest:
    """OTLP/JSON ``ExportTraceServiceRequest`` (or ``TracesData``) -> protobuf; ``ValueError`` if malformed."""
    return _parse(_traces_doc(data), ExportTraceServiceRequest())


def parse_traces_json_salvaging(data: bytes | str) -> tuple[ExportTraceServiceRequest, int]:
    """``parse_traces_json``, except that spans nested too deep to parse are left out: (request, how many)."""
    doc = _traces_doc(data)
    return _parse_salvaging(doc, ExportTraceServiceRequest(), _SPAN_LISTS)


def parse_logs_json(data: bytes | str) -> ExportLogsServiceRequest:
    """OTLP/JSON ``ExportLogsServiceRequest`` (or ``LogsData``) -> protobuf; ``ValueError`` if malformed."""
    return _parse(_logs_doc(data), ExportLogsServiceRequest())


def parse_logs_json_salvaging(data: bytes | str) -> tuple[ExportLogsServiceRequest, int]:
    doc = _logs_doc(data)
    return _parse_salvaging(doc, ExportLogsServiceRequest(), _LOG_LISTS)


_SPAN_LISTS = (("resourceSpans", "scopeSpans", "spans"), ("resource_spans", "scope_spans", "spans"))
_LOG_LISTS = (("resourceLogs", "scopeLogs", "logRecords"), ("resource_logs", "scope_logs", "log_records"))


def _traces_doc(data: bytes | str) -> dict[str, Any]:
    doc = _load(data, "resourceSpans")
    for resource_spans in _dicts(doc, "resourceSpans", "resource_spans"):
        for scope_spans in _dicts(resource_spans, "scopeSpans", "scope_spans"):
            for span in _dicts(scope_spans, "spans"):
                _hex_ids(span)
                for link in _dicts(span, "links"):
                    _hex_ids(link)
    return doc


def _logs_doc(data: bytes | str) -> dict[str, Any]:
    doc = _load(data, "resourceLogs")
    for resource_logs in _dicts(doc, "resourceLogs", "resource_logs"):
        for scope_logs in _dicts(resource_logs, "scopeLogs", "scope_logs"):
            for record in _dicts(scope_logs, "logRecords", "log_records"):
                _hex_ids(record)
    return doc


def _parse_salvaging(doc: dict[str, Any], message: M, lists: tuple[tuple[str, str, str], ...]) -> tuple[M, int]:
    try:
        return _parse(doc, message), 0
    except ValueError as err:
        if "too deep" not in str(err):
            raise
        try:
            lost = sum(salvage_json(doc, message, keys) for keys in lists)
        except Exception:  # another item is malformed in another way: the request is, as first reported
            raise err from None
        if not lost:
            raise
        message.Clear()
        return _parse(doc, message), lost


def to_json(message: Message) -> bytes:
    """A response or ``google.rpc.Status`` as OTLP/JSON (camelCase, int64 as strings, enums as integers)."""
    doc = json_format.MessageToDict(message, use_integers_for_enums=True)
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _load(data: bytes | str, top_key: str) -> dict[str, Any]:
    try:
        doc = json.loads(data)
    except UnicodeDecodeError as err:
        raise ValueError(f"invalid JSON: the body is not UTF-8 ({err.reason} at byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise ValueError("invalid JSON: nested too deeply") from None
    if not isinstance(doc, dict):
        raise ValueError(f"OTLP/JSON must be an object with a {top_key!r} list, got a JSON {_json_type(doc)}")
    return doc


def _parse(doc: dict[str, Any], message: M) -> M:
    name = message.DESCRIPTOR.name
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True)
    except json_format.ParseError as err:
        raise ValueError(f"not an OTLP/JSON {name}: {err}") from None
    except RecursionError:
        raise ValueError(f"not an OTLP/JSON {name}: nested too deeply") from None
    except (TypeError, AttributeError, KeyError) as err:  # defensive: json_format on odd shapes
        raise ValueError(f"not an OTLP/JSON {name}: {err}") from None
    except (SystemError, UnicodeError) as err:  # upb on a name with a lone surrogate (see the module docstring)
        if isinstance(err, UnicodeError) or isinstance(err.__cause__, UnicodeError):
            raise ValueError(f"not an OTLP/JSON {name}: a string is not valid Unicode (a lone surrogate escape such "
                             "as \\ud800)") from None
        raise
    return message


def _dicts(container: dict[str, Any], *keys: str) -> Iterator[dict[str, Any]]:
    """The objects in ``container[key]`` when it is a list; other shapes are left for ``ParseDict`` to report."""
    for key in keys:
        items = container.get(key)
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict):
                    yield item


def _hex_ids(obj: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        if key in obj:
            obj[key] = _hex_to_base64(obj[key])


def _hex_to_base64(value: Any) -> str:
    if not isinstance(value, str):
        return _INVALID_ID
    if not value:
        return ""
    try:
        raw = binascii.unhexlify(value)
    except (binascii.Error, ValueError):
        return _INVALID_ID
    return base64.b64encode(raw).decode("ascii")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"
