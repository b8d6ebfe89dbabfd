from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

import evald.receivers.convert as convert_module
from evald.model import STATUS_ERROR
from evald.receivers.convert import INVALID_ID, NO_TRACE_ID, any_value, convert_logs, convert_traces, count_spans
from tests.receivers.support import SPAN_ID, TRACE_ID, logs_request, trace_request, value


def test_every_any_value_type() -> None:
    assert any_value(AnyValue()) is None
    assert any_value(AnyValue(string_value="héllo")) == "héllo"
    assert any_value(AnyValue(string_value="")) == ""
    assert any_value(AnyValue(bool_value=False)) is False
    assert any_value(AnyValue(bool_value=True)) is True
    assert any_value(AnyValue(int_value=-(2**63))) == -(2**63)
    assert any_value(AnyValue(int_value=0)) == 0
    assert any_value(AnyValue(double_value=1.5)) == 1.5
    assert any_value(AnyValue(bytes_value=b"\x00\xff")) == b"\x00\xff"
    assert any_value(AnyValue(string_value_strindex=3)) is None  # profiles dictionary index: not for traces


def test_nested_kvlist_and_array() -> None:
    nested = {"a": [1, "two", {"b": [True, None, 2.5]}], "c": {"d": {"e": b"raw"}}, "empty": [], "none": {}}
    assert any_value(value(nested)) == nested
    assert any_value(value([[1, [2, [3]]]])) == [[1, [2, [3]]]]


def test_invalid_utf8_in_bytes_stays_bytes() -> None:
    raw = b"\xc3\x28\xff\xfe"
    req = trace_request(attributes={"blob": raw})
    (span,) = convert_traces(req).records
    assert span.attributes["blob"] == raw and isinstance(span.attributes["blob"], bytes)


def test_span_fields_resource_and_scope_are_flattened() -> None:
    req = trace_request(2, attributes={"gen_ai.operation.name": "chat", "n": 3})
    span0 = req.resource_spans[0].scope_spans[0].spans[0]
    span0.parent_span_id = bytes.fromhex("00f067aa0ba902b7")
    span0.status.code = STATUS_ERROR
    span0.status.message = "boom"
    result = convert_traces(req)
    assert result.rejected == {} and result.rejected_count == 0 and result.message("spans") == ""
    first, second = result.records
    assert first.trace_id == TRACE_ID.hex() and len(first.trace_id) == 32
    assert first.span_id == "0000000000000001" and first.parent_span_id == "00f067aa0ba902b7"
    assert second.parent_span_id is None and second.is_root
    assert first.name == "span-0" and first.kind == 3
    assert first.duration_ms == 100.0
    assert first.attributes == {"gen_ai.operation.name": "chat", "n": 3}
    assert first.status_code == STATUS_ERROR and first.status_message == "boom"
    assert first.resource == {"service.name": "svc"} and first.service_name == "svc"
    assert (first.scope_name, first.scope_version) == ("test.scope", "1.2.3")


def test_attribute_values_of_every_type_side_by_side() -> None:
    """The string fast path (a non-empty ``string_value`` read directly) next to every other kind and the empty
    string, in one attribute list."""
    attrs = {"s": "text", "empty": "", "i": 0, "neg": -7, "b": False, "d": 0.0, "raw": b"", "arr": ["x", 1],
             "kv": {"k": ""}, "unset": None}
    (span,) = convert_traces(trace_request(attributes=attrs)).records
    assert span.attributes == attrs
    assert [type(v) for v in span.attributes.values()] == [type(v) for v in attrs.values()]


def test_a_resource_is_converted_once_and_shared_across_requests(monkeypatch: Any) -> None:
    monkeypatch.setattr(convert_module, "_resources", {})
    first = convert_traces(trace_request(2)).records
    again = convert_traces(trace_request(1)).records
    assert first[0].resource is first[1].resource is again[0].resource == {"service.name": "svc"}
    other = trace_request(1)
    other.resource_spans[0].resource.attributes[0].value.string_value = "other"
    (changed,) = convert_traces(other).records
    assert changed.resource == {"service.name": "other"} and first[0].resource == {"service.name": "svc"}
    logs = convert_logs(logs_request(1)).records
    assert logs[0].resource is first[0].resource


def test_the_resource_memo_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(convert_module, "_resources", {})
    for i in range(convert_module.MAX_CACHED_RESOURCES + 10):
        request = trace_request(1)
        request.resource_spans[0].resource.attributes[0].value.string_value = f"svc-{i}"
        (span,) = convert_traces(request).records
        assert span.service_name == f"svc-{i}"
    assert 0 < len(convert_module._resources) <= convert_module.MAX_CACHED_RESOURCES


def test_all_zero_parent_means_root() -> None:
    req = trace_request()
    req.resource_spans[0].scope_spans[0].spans[0].parent_span_id = bytes(8)
    assert convert_traces(req).records[0].parent_span_id is None


def test_invalid_ids_are_rejected_not_raised() -> None:
    req = trace_request(7)
    spans = req.resource_spans[0].scope_spans[0].spans
    spans[0].trace_id = bytes(16)  # all zeros
    spans[1].span_id = bytes(8)  # all zeros
    spans[2].trace_id = b"\x01" * 8  # wrong length
    spans[3].span_id = b""  # missing
    spans[4].parent_span_id = b"\x01\x02"  # wrong length
    result = convert_traces(req)
    assert [s.name for s in result.records] == ["span-5", "span-6"]
    assert result.rejected == {INVALID_ID: 5} and result.rejected_count == 5
    assert result.message("spans").startswith("5 spans rejected (invalid_id: trace_id must be 16 bytes")
    assert count_spans(req) == 7


def test_events_are_kept_and_links_ignored() -> None:
    req = trace_request()
    span = req.resource_spans[0].scope_spans[0].spans[0]
    ev = span.events.add(name="gen_ai.choice", time_unix_nano=42)
    ev.attributes.add(key="message").value.CopyFrom(value({"role": "assistant", "content": "Paris"}))
    span.events.add(name="empty")
    span.links.add(trace_id=b"bad", span_id=b"")  # link ids are not validated; links are not carried
    (record,) = convert_traces(req).records
    assert [(e.name, e.time_unix_nano) for e in record.events] == [("gen_ai.choice", 42), ("empty", 0)]
    assert record.events[0].attributes == {"message": {"role": "assistant", "content": "Paris"}}
    assert record.events[1].attributes == {}


def test_log_records() -> None:
    req = logs_request(2)
    recs = req.resource_logs[0].scope_logs[0].log_records
    recs[0].severity_number = 9
    recs[0].body.CopyFrom(value({"content": "Paris", "n": [1]}))
    recs[1].event_name = ""
    recs[1].attributes.add(key="event.name").value.string_value = "gen_ai.choice"
    recs[1].time_unix_nano = 0
    recs[1].observed_time_unix_nano = 77
    recs[1].span_id = b""
    first, second = convert_logs(req).records
    assert first.trace_id == TRACE_ID.hex() and first.span_id == SPAN_ID.hex()
    assert first.event_name == "gen_ai.client.inference.operation.details"
    assert first.body == {"content": "Paris", "n": [1]} and first.severity_number == 9
    assert first.resource == {"service.name": "svc"} and first.scope_name == "logs.scope"
    assert second.event_name == "gen_ai.choice" and second.attributes == {"event.name": "gen_ai.choice"}
    assert second.span_id is None and second.time_unix_nano == 77


def test_log_without_body_or_event_name() -> None:
    req = logs_request()
    rec = req.resource_logs[0].scope_logs[0].log_records[0]
    rec.ClearField("body")
    rec.event_name = ""
    rec.attributes.add(key="event.name").value.int_value = 3  # not a string: ignored
    (out,) = convert_logs(req).records
    assert out.body is None and out.event_name == ""


def test_log_records_without_or_with_bad_ids_are_rejected() -> None:
    req = ExportLogsServiceRequest()
    sl = req.resource_logs.add().scope_logs.add()
    sl.log_records.add(trace_id=b"")
    sl.log_records.add(trace_id=bytes(16))
    sl.log_records.add(trace_id=b"\x01" * 5)
    sl.log_records.add(trace_id=TRACE_ID, span_id=b"\x01" * 3)
    sl.log_records.add(trace_id=TRACE_ID, span_id=bytes(8))
    result = convert_logs(req)
    assert result.rejected == {NO_TRACE_ID: 2, INVALID_ID: 2}
    assert len(result.records) == 1 and result.records[0].span_id is None
    assert "log records rejected" in result.message("log records")


def test_empty_request_converts_to_nothing() -> None:
    assert convert_traces(trace_request(0)).records == ()
    assert convert_logs(ExportLogsServiceRequest()).records == ()


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, database=None)
@given(_values)
def test_any_value_round_trips_through_the_wire(py: Any) -> None:
    wire = value(py).SerializeToString()
    assert _same(any_value(AnyValue.FromString(wire)), py)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
