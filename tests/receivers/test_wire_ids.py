"""The read-ahead of trace ids (evald/receivers/wire_ids.py): a superset of the trace ids decoding gives, on every
trace and log file of tests/testdata and on seeded mutations of them, or None; its field numbers are the installed
descriptors'."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from evald.receivers import wire_ids
from evald.receivers.convert import convert_logs, convert_traces
from evald.receivers.wire_ids import scan, trace_ids
from tests.receivers.test_wire_logs import log_bodies
from tests.receivers.test_wire_traces import trace_bodies
from tests.receivers.wire_support import WIRE_TYPE, field, mutations


def _decoded_ids(body: bytes, logs: bool) -> set[str] | None:
    """The trace ids protobuf + convert.py give (the reference decoder), None when protobuf refuses the body."""
    try:
        if logs:
            return {r.trace_id for r in convert_logs(ExportLogsServiceRequest.FromString(body)).records}
        return {r.trace_id for r in convert_traces(ExportTraceServiceRequest.FromString(body)).records}
    except Exception:  # noqa: BLE001 - a refused body has no ids
        return None


def test_field_keys_are_the_installed_descriptors() -> None:
    def key(descriptor: object, name: str) -> int:
        proto = descriptor.fields_by_name[name]  # type: ignore[attr-defined]
        return int(proto.number << 3 | WIRE_TYPE[proto.type])

    assert wire_ids.REQUEST_RESOURCES == key(ExportTraceServiceRequest.DESCRIPTOR, "resource_spans") \
        == key(ExportLogsServiceRequest.DESCRIPTOR, "resource_logs")
    assert wire_ids.RESOURCE_SCOPES == key(ResourceSpans.DESCRIPTOR, "scope_spans") \
        == key(ResourceLogs.DESCRIPTOR, "scope_logs")
    assert wire_ids.SCOPE_RECORDS == key(ScopeSpans.DESCRIPTOR, "spans") == key(ScopeLogs.DESCRIPTOR, "log_records")
    assert key(Span.DESCRIPTOR, "trace_id") == wire_ids.SPAN_TRACE_ID
    assert key(LogRecord.DESCRIPTOR, "trace_id") == wire_ids.LOG_TRACE_ID


def test_every_file_of_testdata_gives_exactly_its_decoded_trace_ids() -> None:
    """On real captures (every id 16 bytes, each field once) the superset is the set itself."""
    checked = 0
    for bodies, logs in ((trace_bodies(), False), (log_bodies(), True)):
        for name, body in bodies:
            decoded = _decoded_ids(body, logs)
            scanned = scan(body, logs)
            assert scanned is not None, name
            assert decoded is not None and scanned - {""} == decoded, name  # exactly: nothing rejected
            parsed = trace_ids(body, logs)  # protobuf's ids when not compiled: the same ("" for a record without)
            assert parsed is not None and parsed - {""} == scanned - {""}, name
            checked += 1
    assert checked > 600


def test_mutated_bodies_give_a_superset_or_none() -> None:
    """Whatever protobuf still accepts after truncations, byte changes, insertions and deletions, the read-ahead
    lists every trace id decoding gives, or says it cannot read the body: it never misses an id."""
    for bodies, logs, seed in ((trace_bodies(), False, 2125), (log_bodies(), True, 2126)):
        sources = [body for _, body in bodies if len(body) < 20_000]
        supersets = unknown = 0
        for body in mutations(sources, 2000, seed):
            decoded = _decoded_ids(body, logs)
            scanned = scan(body, logs)
            if scanned is None:
                unknown += 1
                continue
            if decoded is not None:
                assert scanned >= decoded, body[:200]
                supersets += 1
        assert supersets > 500 and unknown > 100


def test_ids_of_rejected_records_and_repeated_fields_are_all_listed() -> None:
    """A span with a short id and one with an empty id field (both rejected by decoding), one with no id field
    (rejected too), and one whose trace_id field occurs twice (protobuf keeps the last): the read-ahead lists every
    value it saw."""
    first, last = bytes(range(16)), bytes(range(16, 32))
    span = field(1, 2, first) + field(1, 2, last) + field(2, 2, bytes(8))
    short = field(1, 2, b"\x01\x02")
    empty = field(1, 2, b"")
    body = field(1, 2, field(2, 2, field(2, 2, span) + field(2, 2, short) + field(2, 2, empty) + field(2, 2, b"")))
    assert scan(body) == {first.hex(), last.hex(), "0102", ""}
    assert _decoded_ids(body, False) == set()  # span_id of zeros: every span is rejected by decoding


def test_a_body_that_cannot_be_read_is_unknown() -> None:
    _, body = trace_bodies()[0]
    for read in (scan, trace_ids):
        assert read(body[:-3]) is None  # truncated inside a length-delimited field
        assert read(b"\x0b") is None  # a group (wire type 3)
        assert read(b"") == set()  # an empty request holds no trace
