"""The wire decoder (evald/receivers/wire_traces.py, wire.py) against the old path (upb parse + convert_traces): the
same result on every trace file of tests/testdata, on hand-built edge cases and on mutated bodies, or a decline;
and a decline really falls back to the old path's errors and salvage (ingest.py, files.py)."""

from __future__ import annotations

import importlib.machinery
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from evald.errors import EvaldError
from evald.model import SpanRecord
from evald.receivers import wire, wire_traces
from evald.receivers.convert import MAX_CACHED_RESOURCES, Converted, convert_traces
from evald.receivers.files import NotOtlpDocumentError, read_signal_file
from evald.receivers.ingest import MalformedRequest, decode_traces
from evald.receivers.wire import Declined
from evald.receivers.wire_traces import decode_trace_request
from tests.receivers.support import SPAN_ID, TRACE_ID, trace_request, value
from tests.receivers.wire_support import (
    WIRE_TYPE,
    assert_file_reader_refuses_alike,
    field,
    mutations,
    request_bodies,
    switch_of,
    varint,
)

PREFIXES: dict[str, tuple[Descriptor, ...]] = {
    "REQUEST_": (ExportTraceServiceRequest.DESCRIPTOR,), "RS_": (ResourceSpans.DESCRIPTOR,),
    "RESOURCE_": (Resource.DESCRIPTOR,), "SS_": (ScopeSpans.DESCRIPTOR,), "SCOPE_": (InstrumentationScope.DESCRIPTOR,),
    "SPAN_": (Span.DESCRIPTOR,), "EVENT_": (Span.Event.DESCRIPTOR,), "LINK_": (Span.Link.DESCRIPTOR,),
    "STATUS_": (Status.DESCRIPTOR,), "KV_": (KeyValue.DESCRIPTOR,), "AV_": (AnyValue.DESCRIPTOR,),
    "LIST_": (ArrayValue.DESCRIPTOR, KeyValueList.DESCRIPTOR),
}
SHORT = {"DROPPED": "dropped_attributes_count", "START": "start_time_unix_nano", "END": "end_time_unix_nano",
         "TIME": "time_unix_nano", "STRING": "string_value", "BOOL": "bool_value", "INT": "int_value",
         "DOUBLE": "double_value", "ARRAY": "array_value", "KVLIST": "kvlist_value", "BYTES": "bytes_value",
         "STRING_STRINDEX": "string_value_strindex", "DROPPED_EVENTS": "dropped_events_count",
         "DROPPED_LINKS": "dropped_links_count", "DROPPED_ATTRIBUTES": "dropped_attributes_count"}


# --- raw wire building --------------------------------------------------------------------------------------------

def request_of_spans(*spans: bytes, resource: bytes = b"", scope: bytes = b"") -> bytes:
    """A request with one ResourceSpans / ScopeSpans holding the given raw Span bodies."""
    scope_spans = (field(1, 2, scope) if scope else b"") + b"".join(field(2, 2, s) for s in spans)
    resource_spans = (field(1, 2, resource) if resource else b"") + field(2, 2, scope_spans)
    return field(1, 2, resource_spans)


def span_bytes(**fields: Any) -> bytes:
    defaults = {"trace_id": TRACE_ID, "span_id": SPAN_ID, "name": "s", "start_time_unix_nano": 1,
                "end_time_unix_nano": 2}
    return Span(**{**defaults, **fields}).SerializeToString()


def nested(depth: int) -> bytes:
    """An AnyValue ``depth`` arrays / kvlists deep (alternating), around an int."""
    raw = field(3, 0, 1)
    for level in range(depth):
        item = field(1, 2, raw) if level % 2 else field(1, 2, field(1, 2, b"k") + field(2, 2, raw))
        raw = field(5 if level % 2 else 6, 2, item)
    return raw


def attribute(key: str, raw_value: bytes | None) -> bytes:
    """Span field 9 (attributes): a KeyValue with the raw AnyValue body (None: no value field)."""
    return field(9, 2, field(1, 2, key.encode()) + (b"" if raw_value is None else field(2, 2, raw_value)))


# --- comparison ----------------------------------------------------------------------------------------------------

def old_path(body: bytes) -> Converted[SpanRecord]:
    return convert_traces(ExportTraceServiceRequest.FromString(body))


def assert_same(new: Converted[SpanRecord], old: Converted[SpanRecord]) -> None:
    # repr: types (1 / 1.0 / True, b"" / ""), dict order, -0.0 and NaN all show; == for everything else
    assert repr(new.records) == repr(old.records)
    assert new.rejected == old.rejected
    if not any(_has_nan(r) for r in old.records):
        assert new.records == old.records


def _has_nan(record: SpanRecord) -> bool:
    return "nan" in repr(record)


def assert_fast_equals_old(body: bytes) -> Converted[SpanRecord]:
    new = decode_trace_request(body)
    assert_same(new, old_path(body))
    return new


def trace_bodies() -> tuple[tuple[str, bytes], ...]:
    """Every trace request under tests/testdata as protobuf bytes (JSON ones through the project's JSON parser)."""
    return request_bodies(logs=False)


# --- tests ---------------------------------------------------------------------------------------------------------

def test_field_keys_are_the_installed_descriptors() -> None:
    checked = 0
    for module in (wire, wire_traces):
        for name, key in vars(module).items():
            prefix = next((p for p in PREFIXES if name.startswith(p)), None)
            if prefix is None or not isinstance(key, int):
                continue
            rest = name[len(prefix):]
            for descriptor in PREFIXES[prefix]:
                fields = descriptor.fields_by_name
                proto = fields.get(rest.lower()) or fields[SHORT[rest]]
                assert key == proto.number << 3 | WIRE_TYPE[proto.type], (name, descriptor.full_name)
                checked += 1
    assert checked == 54
    assert [f.number for f in ArrayValue.DESCRIPTOR.fields] == [1] == [f.number for f in KeyValueList.DESCRIPTOR.fields]


def test_every_trace_file_of_testdata_decodes_exactly_as_the_old_path() -> None:
    bodies = trace_bodies()
    assert len(bodies) > 500
    spans = 0
    for name, body in bodies:
        try:
            new = assert_fast_equals_old(body)
        except Declined:  # pragma: no cover - the message says which
            pytest.fail(f"declined a real capture: {name}")
        spans += len(new.records)
    assert spans > 1000


def test_a_resource_is_one_dict_shared_by_its_records_and_later_requests() -> None:
    body = trace_request(3).SerializeToString()
    first, again = decode_trace_request(body), decode_trace_request(body)
    resources = {id(r.resource) for r in first.records + again.records}
    assert len(resources) == 1 and first.records[0].resource == {"service.name": "svc"}
    for i in range(MAX_CACHED_RESOURCES + 5):
        decode_trace_request(trace_request(1, service=f"svc-{i}").SerializeToString())
    assert 0 < len(wire_traces._resources) <= MAX_CACHED_RESOURCES
    empty = request_of_spans(span_bytes(), resource=field(2, 0, 3)) * 2  # no attributes: a fresh {} each
    records = assert_fast_equals_old(empty).records
    assert records[0].resource == {} and records[0].resource is not records[1].resource


VALUES: list[tuple[str, bytes | None]] = [
    ("negative", field(3, 0, -5)), ("min", field(3, 0, -(2**63))), ("max", field(3, 0, 2**63 - 1)),
    ("double", field(4, 1, struct.pack("<d", -2.5))), ("neg_zero", field(4, 1, struct.pack("<d", -0.0))),
    ("inf", field(4, 1, struct.pack("<d", float("inf")))), ("nan", field(4, 1, struct.pack("<d", float("nan")))),
    ("bytes", field(7, 2, b"\xff\x00\xc3(")), ("empty_bytes", field(7, 2, b"")),
    ("empty_string", field(1, 2, b"")), ("unset", b""), ("no_value", None), ("true", field(2, 0, 1)),
    ("false", field(2, 0, 0)), ("bool_big", field(2, 0, 300)), ("strindex", field(8, 0, 4)),
    ("utf8", field(1, 2, "héllo ☃ \U0001f600".encode())),
    ("nested", value({"a": [1, "two", {"b": [True, None, 2.5]}], "c": {"d": {"e": b"raw"}}, "e": [], "f": {}}
                     ).SerializeToString()),
    ("dup_keys", field(6, 2, field(1, 2, field(1, 2, b"k") + field(2, 2, field(3, 0, 1)))
                     + field(1, 2, field(1, 2, b"j")) + field(1, 2, field(1, 2, b"k") + field(2, 2, b"")))),
    ("last_scalar_wins", field(1, 2, b"first") + field(3, 0, 7)),
    ("scalar_after_array", field(5, 2, field(1, 2, field(3, 0, 1))) + field(1, 2, b"x")),
    ("strindex_after_string", field(1, 2, b"x") + field(8, 0, 1)),
    ("overlong_int", varint(3 << 3) + b"\x81\x80\x00"),
    ("unknown_fields", field(9, 0, 5) + field(10, 1, bytes(8)) + field(11, 5, bytes(4)) + field(12, 2, b"zz")
     + field(1, 2, b"v") + field(13, 0, 1)),
    ("array_unknown", field(5, 2, field(2, 0, 1) + field(1, 2, field(3, 0, 9)))),
]


@pytest.mark.parametrize(("name", "raw"), VALUES, ids=[n for n, _ in VALUES])
def test_attribute_values_are_what_convert_makes_of_them(name: str, raw: bytes | None) -> None:
    kv_extra = field(3, 0, 2) + field(15, 2, b"?")  # key_strindex and an unknown KeyValue field
    body = request_of_spans(span_bytes() + attribute(name, raw) + field(9, 2, field(1, 2, b"x") + kv_extra))
    assert_fast_equals_old(body)


SPANS: list[tuple[str, bytes]] = [
    ("ids_upper_bytes", span_bytes(trace_id=b"\xab" * 16, span_id=b"\xcd" * 8, parent_span_id=b"\xef" * 8)),
    ("zero_parent", span_bytes(parent_span_id=bytes(8))),
    ("bad_parent", span_bytes(parent_span_id=b"\x01" * 7)),
    ("short_trace", span_bytes(trace_id=b"\x01" * 15)), ("zero_trace", span_bytes(trace_id=bytes(16))),
    ("zero_span", span_bytes(span_id=bytes(8))), ("no_ids", Span(name="x").SerializeToString()),
    ("events_status", span_bytes(kind=3, status=Status(code=2, message="boom"), events=[
        Span.Event(name="e1", time_unix_nano=5, attributes=[KeyValue(key="a", value=value([1]))]),
        Span.Event(name="e2")], links=[Span.Link(trace_id=TRACE_ID, span_id=SPAN_ID, trace_state="k=v",
                                                attributes=[KeyValue(key="l", value=value("x"))])],
        trace_state="a=b", flags=0x301, dropped_attributes_count=2, dropped_events_count=3, dropped_links_count=4)),
    ("empty_status", span_bytes() + field(15, 2, b"")),
    ("repeated_scalars", span_bytes() + field(5, 2, b"second") + field(6, 0, 2) + field(7, 1, struct.pack("<Q", 9))
     + field(1, 2, b"\x07" * 16) + field(2, 2, b"\x08" * 8)),
    ("unknown_span_fields", span_bytes() + field(99, 0, 1) + field(100, 2, b"x") + field(2000, 1, bytes(8))
     + field(17, 5, bytes(4))),
    ("unknown_event_status_fields", span_bytes() + field(11, 2, field(2, 2, b"e") + field(9, 0, 1))
     + field(15, 2, field(3, 0, 1) + field(7, 2, b"x"))),
    ("max_times", span_bytes(start_time_unix_nano=2**64 - 1, end_time_unix_nano=2**63)),
    ("kind_unknown_enum", span_bytes(kind=77)),
]


@pytest.mark.parametrize(("name", "raw"), SPANS, ids=[n for n, _ in SPANS])
def test_spans_are_what_convert_makes_of_them(name: str, raw: bytes) -> None:
    body = request_of_spans(raw, span_bytes(name="neighbour"), scope=field(1, 2, b"sc") + field(2, 2, b"1.0"))
    assert_fast_equals_old(body)


def test_envelopes_in_any_order_with_schema_urls() -> None:
    resource = field(1, 2, field(1, 2, b"service.name") + field(2, 2, field(1, 2, b"svc"))) + field(2, 0, 1)
    scope = field(1, 2, b"n") + field(2, 2, b"v") + field(3, 2, field(1, 2, b"k")) + field(4, 0, 1)
    scope_spans = field(2, 2, span_bytes()) + field(3, 2, b"url") + field(1, 2, scope) + field(2, 2, span_bytes())
    resource_spans = field(2, 2, scope_spans) + field(3, 2, b"url") + field(1, 2, resource) + field(2, 2, b"")
    records = assert_fast_equals_old(field(1, 2, resource_spans) * 2).records
    assert [(r.scope_name, r.resource) for r in records] == [("n", {"service.name": "svc"})] * 4


DECLINED: list[tuple[str, bytes]] = [
    ("empty_body", b""),
    ("truncated", request_of_spans(span_bytes())[:-1]),
    ("group", request_of_spans(span_bytes() + varint(20 << 3 | 3) + varint(20 << 3 | 4))),
    ("wire_type_7", request_of_spans(span_bytes() + varint(20 << 3 | 7))),
    ("field_zero", request_of_spans(span_bytes() + field(0, 0, 1))),
    ("bad_utf8_name", request_of_spans(span_bytes() + field(5, 2, b"\xff"))),
    ("bad_utf8_trace_state", request_of_spans(span_bytes() + field(3, 2, b"\xed\xa0\x80"))),
    ("bad_utf8_link", request_of_spans(span_bytes() + field(13, 2, field(3, 2, b"\xc0\xaf")))),
    ("bad_utf8_scope_attribute", request_of_spans(span_bytes(), scope=field(3, 2, field(1, 2, b"\xff")))),
    ("bad_utf8_value", request_of_spans(span_bytes() + attribute("k", field(1, 2, b"a\x80")))),
    ("status_twice", request_of_spans(span_bytes() + field(15, 2, field(3, 0, 1)) + field(15, 2, b""))),
    ("value_twice", request_of_spans(span_bytes() + field(9, 2, field(2, 2, b"") + field(2, 2, b"")))),
    ("kvlist_twice", request_of_spans(span_bytes() + attribute("k", field(6, 2, b"") + field(6, 2, b"")))),
    ("array_after_string", request_of_spans(span_bytes() + attribute("k", field(1, 2, b"x") + field(5, 2, b"")))),
    ("resource_twice", field(1, 2, field(1, 2, b"") + field(1, 2, b"") + field(2, 2, field(2, 2, span_bytes())))),
    ("scope_twice", field(1, 2, field(2, 2, field(1, 2, b"") + field(1, 2, b"") + field(2, 2, span_bytes())))),
    ("unknown_in_request", request_of_spans(span_bytes()) + field(2, 0, 1)),
    ("unknown_in_resource", request_of_spans(span_bytes(), resource=field(9, 0, 1))),
    ("entity_refs", request_of_spans(span_bytes(), resource=field(3, 2, b""))),
    ("unknown_in_scope", request_of_spans(span_bytes(), scope=field(9, 0, 1))),
    ("negative_kind", request_of_spans(span_bytes() + field(6, 0, -1))),
    ("name_as_varint", request_of_spans(span_bytes() + field(5, 0, 1))),
    ("double_as_varint", request_of_spans(span_bytes() + attribute("k", field(4, 0, 1)))),
    ("eleven_byte_varint", request_of_spans(span_bytes() + varint(99 << 3) + b"\xff" * 10 + b"\x01")),
    ("deeper_than_the_limit", request_of_spans(span_bytes() + attribute("k", nested(wire.MAX_VALUE_DEPTH + 1)))),
    ("too_deep", request_of_spans(span_bytes() + attribute("k", nested(60)))),  # for upb too
]


@pytest.mark.parametrize(("name", "body"), DECLINED, ids=[n for n, _ in DECLINED])
def test_what_it_is_unsure_of_is_declined(name: str, body: bytes) -> None:
    with pytest.raises(Declined):
        decode_trace_request(body)


def test_a_body_that_is_not_bytes_takes_the_old_path(wire_enabled: Callable[[bool], None]) -> None:
    body = trace_request().SerializeToString()
    wire_enabled(True)
    assert wire_traces.decode_or_none(body) is not None
    for other in (bytearray(body), memoryview(body), body.decode("latin-1")):
        assert wire_traces.decode_or_none(other) is None


def test_values_as_deep_as_the_limit_are_decoded() -> None:
    records = assert_fast_equals_old(request_of_spans(span_bytes() + attribute("k", nested(wire.MAX_VALUE_DEPTH))))
    assert str(records.records[0].attributes).count("[") == wire.MAX_VALUE_DEPTH // 2


def test_mutated_bodies_decode_as_upb_does_or_are_declined() -> None:
    accepted = declined = refused_by_upb = 0
    for body in mutations([body for _, body in trace_bodies() if len(body) < 20_000], 5000, seed=21):
        try:
            new = decode_trace_request(body)
        except Declined:
            declined += 1
            continue
        try:
            old = old_path(body)
        except Exception:  # noqa: BLE001 - the point: the fast path must not accept what upb refuses
            refused_by_upb += 1
            continue
        assert_same(new, old)
        accepted += 1
    assert refused_by_upb == 0
    assert accepted > 1000 and declined > 1000  # both sides of the decision are exercised


@pytest.fixture
def wire_enabled(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    return switch_of(wire_traces, monkeypatch)


@pytest.mark.parametrize("name", ["truncated", "too_deep", "bad_utf8_name", "status_twice", "resource_twice"])
def test_a_declined_body_gets_the_old_error_or_salvage(name: str, wire_enabled: Callable[[bool], None]) -> None:
    body = dict(DECLINED)[name]
    body = request_of_spans(span_bytes(name="kept")) + body if name == "too_deep" else body

    def outcome() -> tuple[str, str]:
        try:
            return "ok", repr(decode_traces(body, "protobuf"))
        except MalformedRequest as err:
            return "malformed", str(err)

    wire_enabled(False)
    before = outcome()
    wire_enabled(True)
    assert outcome() == before
    with pytest.raises(Declined):  # so the result above came from the old path
        decode_trace_request(body)


def test_the_hooks_give_the_same_records(wire_enabled: Callable[[bool], None], tmp_path: Path) -> None:
    name, body = next(b for b in trace_bodies() if b[0].endswith(".pb"))
    path = tmp_path / "t.pb"
    path.write_bytes(body)
    results = []
    for on in (False, True):
        wire_enabled(on)
        results.append((decode_traces(body, "protobuf"), read_signal_file(path).spans))
    assert wire_traces.decode_or_none(body) is not None  # so the second results came from the fast path
    assert_same(results[1][0], results[0][0])
    assert repr(results[1][1]) == repr(results[0][1]) and results[0][1], name


@pytest.mark.parametrize(("body", "error"), [
    (request_of_spans(span_bytes()) + field(2, 0, 1), EvaldError),  # unknown field in the request envelope
    (request_of_spans(span_bytes(), scope=field(9, 0, 1)), EvaldError),
    (b"", NotOtlpDocumentError),
    (request_of_spans(span_bytes(trace_id=bytes(16))), EvaldError),  # no usable span
])
def test_the_file_reader_still_refuses_what_it_refused(body: bytes, error: type[Exception], tmp_path: Path,
                                                       wire_enabled: Callable[[bool], None]) -> None:
    assert_file_reader_refuses_alike(tmp_path / "t.pb", body, error, wire_enabled)


def test_compiled_says_whether_this_module_is_an_extension() -> None:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert wire_traces.compiled() == str(wire_traces.__file__).endswith(suffixes)
    assert wire_traces.enabled == wire_traces.compiled()
