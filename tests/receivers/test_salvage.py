"""One span or log record nested too deep costs only itself: protobuf and OTLP/JSON, through the HTTP receiver."""

from __future__ import annotations

import json

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from evald.receivers.converted import UNDECODABLE
from evald.receivers.ingest import MalformedRequest, decode_logs, decode_traces
from evald.receivers.otlp import OTLPHttpConfig
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, logs_request, sample, trace_request


def nested(depth: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for _ in range(depth):
        outer = AnyValue()
        outer.array_value.values.add().CopyFrom(value)
        value = outer
    return value


def request_with_one_deep_span(depth: int, spans: int = 3) -> bytes:
    request = trace_request(spans)
    request.resource_spans[0].scope_spans[0].spans[1].attributes.add(key="deep").value.CopyFrom(nested(depth))
    return request.SerializeToString()


def json_with_one_deep_span(depth: int) -> bytes:
    value: dict[str, object] = {"stringValue": "leaf"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    spans: list[dict[str, object]] = [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": f"{i + 1:016x}", "name": f"span-{i}"}
        for i in range(3)]
    spans[1]["attributes"] = [{"key": "deep", "value": value}]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_a_value_nested_too_deep_rejects_only_its_span(encoding: str) -> None:
    body = json_with_one_deep_span(60) if encoding == "json" else request_with_one_deep_span(60)
    converted = decode_traces(body, encoding)  # type: ignore[arg-type]
    assert [s.name for s in converted.records] == ["span-0", "span-2"]
    assert converted.rejected == {UNDECODABLE: 1} and "nested deeper" in converted.message("spans")


def test_a_value_within_the_limit_is_kept() -> None:
    converted = decode_traces(request_with_one_deep_span(40), "protobuf")
    assert len(converted.records) == 3 and not converted.rejected


def test_damage_outside_the_spans_still_fails_the_whole_request() -> None:
    body = request_with_one_deep_span(60)
    with pytest.raises(MalformedRequest):
        decode_traces(body[:-3], "protobuf")  # truncated: the frames around the spans are broken
    with pytest.raises(MalformedRequest):
        decode_traces(b"\x0a\xff\xff\xff\xff", "protobuf")


def test_log_records_are_salvaged_the_same_way() -> None:
    request = logs_request(3)
    request.resource_logs[0].scope_logs[0].log_records[0].body.CopyFrom(nested(60))
    converted = decode_logs(request.SerializeToString(), "protobuf")
    assert [r.body for r in converted.records] == ["body-1", "body-2"] and converted.rejected == {UNDECODABLE: 1}


@pytest.mark.integration
async def test_the_http_receiver_answers_partial_success_for_the_deep_span() -> None:
    telemetry = Telemetry()
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), telemetry)
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{receiver.bound_port}") as client:
            response = await client.post("/v1/traces", content=request_with_one_deep_span(60),
                                         headers={"Content-Type": "application/x-protobuf"})
        assert response.status_code == 200
        answer = ExportTraceServiceResponse.FromString(response.content)
        assert answer.partial_success.rejected_spans == 1 and UNDECODABLE in answer.partial_success.error_message
        assert len(consumer.spans) == 2
        assert sample(telemetry.registry, "evald_receiver_refused_spans_total", receiver="otlp", transport="http",
                      reason=UNDECODABLE) == 1
    finally:
        await receiver.shutdown(1.0)


def test_a_deep_span_beside_an_otherwise_malformed_one_is_still_a_400() -> None:
    doc = json.loads(json_with_one_deep_span(60))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["startTimeUnixNano"] = "not a number"
    with pytest.raises(MalformedRequest, match="too deep"):  # found by the fuzz run: was an internal error (500)
        decode_traces(json.dumps(doc).encode(), "json")
