"""The log wire decoder (evald/receivers/wire_logs.py) against the old path (upb parse + convert_logs): the same
result on every log file of tests/testdata, on edge cases and on mutated bodies, or a decline that falls back to the
old path (ingest.py, files.py). The wire primitives and values are tested in test_wire_traces.py."""

from __future__ import annotations

import importlib.machinery
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as LogRecordProto
from opentelemetry.proto.logs.v1.logs_pb2 import ResourceLogs, ScopeLogs

from evald.errors import EvaldError
from evald.model import LogRecord
from evald.receivers import wire_logs
from evald.receivers.convert import Converted, convert_logs
from evald.receivers.files import NotOtlpDocumentError, read_signal_file
from evald.receivers.ingest import MalformedRequest, decode_logs
from evald.receivers.wire import Declined
from evald.receivers.wire_logs import decode_logs_request
from tests.receivers.support import SPAN_ID, TRACE_ID, logs_request, value
from tests.receivers.wire_support import (
    WIRE_TYPE,
    assert_file_reader_refuses_alike,
    field,
    mutations,
    request_bodies,
    switch_of,
    varint,
)


def request_of_records(*records: bytes, resource: bytes = b"", scope: bytes = b"") -> bytes:
    scope_logs = (field(1, 2, scope) if scope else b"") + b"".join(field(2, 2, r) for r in records)
    return field(1, 2, (field(1, 2, resource) if resource else b"") + field(2, 2, scope_logs))


def record(**fields: object) -> bytes:
    defaults: dict[str, object] = {"trace_id": TRACE_ID, "span_id": SPAN_ID, "time_unix_nano": 5}
    return LogRecordProto(**{**defaults, **fields}).SerializeToString()  # type: ignore[arg-type]


def old_path(body: bytes) -> Converted[LogRecord]:
    return convert_logs(ExportLogsServiceRequest.FromString(body))


def assert_same(new: Converted[LogRecord], old: Converted[LogRecord]) -> None:
    assert repr(new) == repr(old)  # types, dict order, NaN and -0.0 show in the repr
    if "nan" not in repr(old):
        assert new == old


def assert_fast_equals_old(body: bytes) -> Converted[LogRecord]:
    new = decode_logs_request(body)
    assert_same(new, old_path(body))
    return new


def log_bodies() -> tuple[tuple[str, bytes], ...]:
    """Every log request under tests/testdata as protobuf bytes (JSON ones through the project's JSON parser)."""
    return request_bodies(logs=True)


def test_field_keys_are_the_installed_descriptors() -> None:
    short = {"TIME": "time_unix_nano", "OBSERVED_TIME": "observed_time_unix_nano",
             "DROPPED": "dropped_attributes_count"}
    descriptors = {"REQUEST_": ExportLogsServiceRequest.DESCRIPTOR, "RL_": ResourceLogs.DESCRIPTOR,
                   "SL_": ScopeLogs.DESCRIPTOR, "LOG_": LogRecordProto.DESCRIPTOR}
    checked = 0
    for name, key in vars(wire_logs).items():
        prefix = next((p for p in descriptors if name.startswith(p)), None)
        if prefix is None or not isinstance(key, int):
            continue
        fields = descriptors[prefix].fields_by_name
        rest = name[len(prefix):]
        proto = fields.get(rest.lower()) or fields[short[rest]]
        assert key == proto.number << 3 | WIRE_TYPE[proto.type], name
        checked += 1
    assert checked == 18


def test_every_log_file_of_testdata_decodes_exactly_as_the_old_path() -> None:
    bodies = log_bodies()
    assert len(bodies) > 80
    records = 0
    for name, body in bodies:
        try:
            records += len(assert_fast_equals_old(body).records)
        except Declined:  # pragma: no cover - the message says which
            pytest.fail(f"declined a real capture: {name}")
    assert records > 150


CASES: list[tuple[str, bytes]] = [
    ("no_trace_id", record(trace_id=b"")), ("zero_trace_id", record(trace_id=bytes(16))),
    ("short_trace_id", record(trace_id=b"\x01" * 15)), ("bad_span_id", record(span_id=b"\x01" * 7)),
    ("no_span_id", record(span_id=b"")), ("zero_span_id", record(span_id=bytes(8))),
    ("event_name_from_attribute", record(attributes=[{"key": "event.name", "value": {"string_value": "ev"}}])),
    ("event_name_not_a_string", record(attributes=[{"key": "event.name", "value": {"int_value": 3}}])),
    ("event_name_field_wins", record(event_name="field", attributes=[{"key": "event.name",
                                                                      "value": {"string_value": "attr"}}])),
    ("observed_time", record(time_unix_nano=0, observed_time_unix_nano=9)),
    ("body_kvlist", record(body=value({"a": [1, 2.5, b"x"], "b": None}))), ("body_string", record(body=value("t"))),
    ("body_empty", record() + field(5, 2, b"")), ("body_double", record() + field(5, 2, field(4, 1, struct.pack(
        "<d", -0.0)))),
    ("severity", record(severity_number=17, severity_text="ERROR", flags=1, dropped_attributes_count=2)),
    ("repeated_scalars", record(event_name="a") + field(12, 2, b"b") + field(1, 1, struct.pack("<Q", 7))),
    ("unknown_fields", record() + field(99, 0, 1) + field(100, 2, b"x") + field(101, 5, bytes(4))),
]


@pytest.mark.parametrize(("name", "raw"), CASES, ids=[n for n, _ in CASES])
def test_records_are_what_convert_makes_of_them(name: str, raw: bytes) -> None:
    resource = field(1, 2, field(1, 2, b"service.name") + field(2, 2, field(1, 2, b"svc")))
    assert_fast_equals_old(request_of_records(raw, record(event_name="neighbour"), resource=resource,
                                              scope=field(1, 2, b"scope") + field(2, 2, b"1")))


def test_mixed_rejections_are_counted_like_convert_logs() -> None:
    body = request_of_records(record(trace_id=b""), record(trace_id=b"\x01"), record(), record(trace_id=b""))
    assert assert_fast_equals_old(body).rejected == {"invalid_id": 1, "no_trace_id": 2}


DECLINED: list[tuple[str, bytes]] = [
    ("empty_body", b""),
    ("truncated", request_of_records(record())[:-1]),
    ("body_twice", request_of_records(record() + field(5, 2, b"") + field(5, 2, b""))),
    ("negative_severity", request_of_records(record() + field(2, 0, -1))),
    ("bad_utf8_severity_text", request_of_records(record() + field(3, 2, b"\xff"))),
    ("bad_utf8_event_name", request_of_records(record() + field(12, 2, b"\xc3"))),
    ("trace_id_as_varint", request_of_records(record() + field(9, 0, 1))),
    ("unknown_in_scope_logs", field(1, 2, field(2, 2, field(2, 2, record()) + field(4, 0, 1)))),
    ("group", request_of_records(record() + varint(20 << 3 | 3) + varint(20 << 3 | 4))),
]


@pytest.mark.parametrize(("name", "body"), DECLINED, ids=[n for n, _ in DECLINED])
def test_what_it_is_unsure_of_is_declined(name: str, body: bytes) -> None:
    with pytest.raises(Declined):
        decode_logs_request(body)


def test_mutated_bodies_decode_as_upb_does_or_are_declined() -> None:
    accepted = declined = 0
    for body in mutations([body for _, body in log_bodies() if len(body) < 20_000], 3000, seed=2121):
        try:
            new = decode_logs_request(body)
        except Declined:
            declined += 1
            continue
        assert_same(new, old_path(body))  # upb must accept what the fast path accepted
        accepted += 1
    assert accepted > 500 and declined > 500


@pytest.fixture
def wire_enabled(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    return switch_of(wire_logs, monkeypatch)


@pytest.mark.parametrize("name", ["truncated", "body_twice", "bad_utf8_event_name", "empty_body"])
def test_a_declined_body_gets_the_old_result_or_error(name: str, wire_enabled: Callable[[bool], None]) -> None:
    body = dict(DECLINED)[name]

    def outcome() -> str:
        try:
            return repr(decode_logs(body, "protobuf"))
        except MalformedRequest as err:
            return f"malformed: {err}"

    wire_enabled(False)
    before = outcome()
    wire_enabled(True)
    assert outcome() == before
    assert wire_logs.decode_or_none(body) is None


def test_the_hooks_give_the_same_records(wire_enabled: Callable[[bool], None], tmp_path: Path) -> None:
    body = logs_request(3).SerializeToString()
    path = tmp_path / "t.logs.pb"
    path.write_bytes(body)
    results = []
    for on in (False, True):
        wire_enabled(on)
        results.append((repr(decode_logs(body, "protobuf")), repr(read_signal_file(path).logs)))
    assert results[0] == results[1] and "body-2" in results[0][1]
    assert wire_logs.decode_or_none(body) is not None  # so the second results came from the fast path
    assert wire_logs.decode_or_none(bytearray(body)) is None


@pytest.mark.parametrize(("body", "error"), [
    (request_of_records(record()) + field(2, 0, 1), EvaldError),  # unknown field in the request envelope
    (b"", NotOtlpDocumentError),
    (request_of_records(record(trace_id=b"")), EvaldError),  # no usable record
])
def test_the_file_reader_still_refuses_what_it_refused(body: bytes, error: type[Exception], tmp_path: Path,
                                                       wire_enabled: Callable[[bool], None]) -> None:
    assert_file_reader_refuses_alike(tmp_path / "t.logs.pb", body, error, wire_enabled)


def test_compiled_says_whether_this_module_is_an_extension() -> None:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert wire_logs.compiled() == str(wire_logs.__file__).endswith(suffixes)
    assert wire_logs.enabled == wire_logs.compiled()
