"""Per-trace splitting (what the Collector's Kafka exporter does with ``partition_traces_by_id``), on hand-built
requests converted as the OTLP receivers convert them."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from evald.ingest.split import encode, split_logs, split_spans
from evald.receivers.convert import attributes, convert_logs, convert_traces
from evald.receivers.otlp_json import parse_logs_json, parse_traces_json
from tests.receivers.support import value

T1, T2, T3 = (bytes([i]) * 16 for i in (1, 2, 3))
ATTRS = {"gen_ai.system": "openai", "n": 3, "ok": True, "ratio": 0.5, "raw": b"\x00\x01",
         "tags": ["a", 1], "nested": {"k": "v", "deep": {"x": [1.5]}}}


def three_traces() -> ExportTraceServiceRequest:
    """Two resources; trace 1 spans both resources, traces 2 and 3 one each; spans interleaved."""
    req = ExportTraceServiceRequest()
    layout = {"svc-a": [(T1, 1, None), (T2, 2, None), (T1, 3, 1)], "svc-b": [(T3, 4, None), (T1, 5, 1)]}
    for service, spans in layout.items():
        rs = req.resource_spans.add()
        rs.resource.attributes.add(key="service.name").value.string_value = service
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = f"scope-{service}", "1.0"
        for trace_id, n, parent in spans:
            span = ss.spans.add(trace_id=trace_id, span_id=n.to_bytes(8, "big"), name=f"span-{n}",
                                kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1000 + n, end_time_unix_nano=2000 + n)
            if parent:
                span.parent_span_id = parent.to_bytes(8, "big")
            for key, v in ATTRS.items():
                span.attributes.add(key=key).value.CopyFrom(value(v))
            event = span.events.add(name="gen_ai.choice", time_unix_nano=1500)
            event.attributes.add(key="index").value.int_value = n
            span.status.code, span.status.message = 2, f"failed {n}"
    return req


def test_three_traces_become_three_records_keyed_by_hex_trace_id() -> None:
    spans = convert_traces(three_traces()).records
    out = split_spans(spans)
    assert list(out) == [T1.hex(), T2.hex(), T3.hex()]  # first-seen order, lowercase hex keys
    for trace_id, request in out.items():
        got = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
        assert {s.trace_id.hex() for s in got} == {trace_id}, "only its own spans"
    services = {tid: [attributes(rs.resource.attributes)["service.name"] for rs in req.resource_spans]
                for tid, req in out.items()}
    assert services == {T1.hex(): ["svc-a", "svc-b"], T2.hex(): ["svc-a"], T3.hex(): ["svc-b"]}
    t1 = out[T1.hex()]
    assert [[s.name for s in ss.spans] for rs in t1.resource_spans for ss in rs.scope_spans] == [
        ["span-1", "span-3"], ["span-5"]]
    assert [ss.scope.name for rs in t1.resource_spans for ss in rs.scope_spans] == ["scope-svc-a", "scope-svc-b"]


def test_every_field_evald_reads_survives_the_round_trip() -> None:
    spans = convert_traces(three_traces()).records
    again = [s for req in split_spans(spans).values() for s in convert_traces(req).records]
    assert sorted(again, key=lambda s: s.span_id) == sorted(spans, key=lambda s: s.span_id)
    assert again[0].attributes == ATTRS
    assert again[0].events[0].attributes == {"index": 1}


def test_otlp_json_encoding_has_hex_ids_and_reads_back() -> None:
    spans = convert_traces(three_traces()).records
    request = split_spans(spans)[T1.hex()]
    text = encode(request, "otlp_json")
    assert f'"traceId":"{T1.hex()}"' in text.decode()
    assert parse_traces_json(text) == request
    assert ExportTraceServiceRequest.FromString(encode(request, "otlp_proto")) == request


def test_log_records_are_split_per_trace_with_their_resource() -> None:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.add(key="service.name").value.string_value = "svc"
    sl = rl.scope_logs.add()
    sl.scope.name = "logs.scope"
    for i, trace_id in enumerate((T1, T2, T1)):
        rec = sl.log_records.add(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"), time_unix_nano=10 + i,
                                 severity_number=9)
        rec.event_name = "gen_ai.choice"
        rec.body.CopyFrom(value({"message": {"content": f"hi {i}"}}))
    logs = convert_logs(req).records
    out = split_logs(logs)
    assert list(out) == [T1.hex(), T2.hex()]
    assert [len(sl.log_records) for rl in out[T1.hex()].resource_logs for sl in rl.scope_logs] == [2]
    again = [rec for r in out.values() for rec in convert_logs(r).records]
    assert sorted(again, key=lambda r: r.time_unix_nano) == list(logs)
    assert parse_logs_json(encode(out[T2.hex()], "otlp_json")) == out[T2.hex()]
