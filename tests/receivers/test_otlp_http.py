from __future__ import annotations

import asyncio
import gzip
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from evald.errors import PermanentError, QueueFullError
from evald.receivers.otlp import OTLPHttpConfig
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.receivers.refusal_hold import REFUSAL_HOLD
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, logs_request, sample, trace_request

pytestmark = pytest.mark.integration

PB = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}
SPAN_JSON = {"resourceSpans": [{"scopeSpans": [{"spans": [
    {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat", "kind": 3},
    {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "nothex", "name": "broken"},
]}]}]}


@dataclass
class Server:
    receiver: OTLPHttpReceiver
    consumer: RecordingConsumer
    telemetry: Telemetry
    client: httpx.AsyncClient

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.receiver.bound_port}"

    def metric(self, name: str, **labels: str) -> float:
        return sample(self.telemetry.registry, name, receiver="otlp", transport="http", **labels)


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    limit = getattr(request, "param", 20 * 1024 * 1024)
    telemetry = Telemetry()
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0", max_request_body_size=limit), telemetry)
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{receiver.bound_port}", timeout=20) as client:
            yield Server(receiver, consumer, telemetry, client)
    finally:
        await receiver.shutdown(1.0)


def _status(response: httpx.Response) -> status_pb2.Status:
    if response.headers["content-type"].startswith("application/json"):
        doc = json.loads(response.content)
        return status_pb2.Status(code=doc.get("code", 0), message=doc.get("message", ""))
    return status_pb2.Status.FromString(response.content)


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
async def test_sdk_span_exporter_delivers_spans(server: Server, compression: Compression) -> None:
    def send() -> None:
        provider = TracerProvider(resource=Resource.create({"service.name": "chat-api"}))
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", compression=compression)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        tracer = provider.get_tracer("test.instrumentation")
        with tracer.start_as_current_span("agent"), tracer.start_as_current_span("chat") as span:
            span.set_attribute("gen_ai.usage.output_tokens", 7)
        assert provider.force_flush(10_000)
        provider.shutdown()

    await asyncio.to_thread(send)
    spans = {s.name: s for s in server.consumer.spans}
    assert set(spans) == {"agent", "chat"} and spans["chat"].parent_span_id == spans["agent"].span_id
    assert spans["chat"].attributes == {"gen_ai.usage.output_tokens": 7}
    assert spans["chat"].resource["service.name"] == "chat-api"
    assert server.metric("evald_receiver_accepted_spans_total") == 2


async def test_sdk_log_exporter_delivers_log_records(server: Server) -> None:
    def send() -> None:
        provider = LoggerProvider()
        provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{server.url}/v1/logs")))
        with TracerProvider().get_tracer("t").start_as_current_span("chat"):
            provider.get_logger("genai").emit(event_name="gen_ai.choice", body="Paris")
        provider.shutdown()

    await asyncio.to_thread(send)
    (rec,) = server.consumer.logs
    assert rec.event_name == "gen_ai.choice" and rec.body == "Paris" and rec.span_id is not None


async def test_protobuf_partial_success_for_invalid_ids(server: Server) -> None:
    req = trace_request(3)
    req.resource_spans[0].scope_spans[0].spans[0].span_id = bytes(8)
    response = await server.client.post("/v1/traces", content=req.SerializeToString(), headers=PB)
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-protobuf"
    body = ExportTraceServiceResponse.FromString(response.content)
    assert body.partial_success.rejected_spans == 1 and "invalid_id" in body.partial_success.error_message
    assert len(server.consumer.spans) == 2


async def test_json_request_gets_json_answer_with_partial_success(server: Server) -> None:
    response = await server.client.post("/v1/traces", content=json.dumps(SPAN_JSON),
                                        headers={"Content-Type": "application/json; charset=utf-8"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "invalid_id" in partial["errorMessage"]
    assert [s.span_id for s in server.consumer.spans] == ["eee19b7ec3c1b174"]


async def test_success_answer_is_an_empty_response(server: Server) -> None:
    response = await server.client.post("/v1/logs", content=logs_request(2).SerializeToString(), headers=PB)
    assert response.status_code == 200
    assert not ExportLogsServiceResponse.FromString(response.content).HasField("partial_success")
    response = await server.client.post("/v1/traces", content=b"{}", headers=JSON)
    assert response.status_code == 200 and response.json() == {}
    assert len(server.consumer.logs) == 2
    assert server.metric("evald_receiver_requests_total", outcome="success") == 2


async def test_gzip_json(server: Server) -> None:
    body = gzip.compress(json.dumps(SPAN_JSON).encode())
    response = await server.client.post("/v1/traces", content=body, headers={**JSON, "Content-Encoding": "gzip"})
    assert response.status_code == 200 and len(server.consumer.spans) == 1


async def test_multi_member_gzip(server: Server) -> None:
    data = trace_request(2).SerializeToString()
    body = gzip.compress(data[:10]) + gzip.compress(data[10:])
    response = await server.client.post("/v1/traces", content=body, headers={**PB, "Content-Encoding": "gzip"})
    assert response.status_code == 200 and len(server.consumer.spans) == 2


@pytest.mark.parametrize(
    ("body", "headers", "match"),
    [
        (trace_request(2).SerializeToString()[:-5], PB, "cannot decode ExportTraceServiceRequest"),
        (b"{nope", JSON, "invalid JSON"),
        (b'{"resourceSpans": 1}', JSON, "not an OTLP/JSON"),
        (b"\x1f\x8b\x08garbage", {**PB, "Content-Encoding": "gzip"}, "invalid gzip"),
        (gzip.compress(b"x" * 1000)[:-10], {**PB, "Content-Encoding": "gzip"}, "truncated"),
    ],
)
async def test_malformed_body_is_400_with_status_in_the_request_encoding(
    server: Server, body: bytes, headers: dict[str, str], match: str
) -> None:
    response = await server.client.post("/v1/traces", content=body, headers=headers)
    assert response.status_code == 400 and response.headers["content-type"] == headers["Content-Type"]
    status = _status(response)
    assert status.code == code_pb2.INVALID_ARGUMENT and match in status.message
    assert server.consumer.calls == 0
    assert server.metric("evald_receiver_requests_total", outcome="invalid_argument") == 1


async def test_unsupported_content_type_or_encoding_is_415(server: Server) -> None:
    response = await server.client.post("/v1/traces", content=b"hi", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415 and "application/x-protobuf" in response.json()["message"]
    response = await server.client.post("/v1/traces", content=b"hi")
    assert response.status_code == 415
    response = await server.client.post("/v1/traces", content=b"hi", headers={**PB, "Content-Encoding": "br"})
    assert response.status_code == 415 and "gzip" in _status(response).message
    assert server.metric("evald_receiver_requests_total", outcome="unsupported") == 3


async def test_wrong_method_and_unknown_path(server: Server) -> None:
    assert (await server.client.get("/v1/traces")).status_code == 405
    assert (await server.client.post("/v1/metrics", content=b"", headers=PB)).status_code == 404


@pytest.mark.parametrize("server", [64 * 1024], indirect=True)
async def test_oversize_body_is_413(server: Server) -> None:
    body = trace_request(1, attributes={"blob": "x" * 70_000}).SerializeToString()
    response = await server.client.post("/v1/traces", content=body, headers=PB)
    assert response.status_code == 413 and "exceeds the limit" in _status(response).message

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: the limit applies while reading
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    response = await server.client.post("/v1/traces", content=chunked(), headers=PB)
    assert response.status_code == 413
    assert server.consumer.calls == 0 and server.metric("evald_receiver_requests_total", outcome="too_large") == 2
    ok = await server.client.post("/v1/traces", content=trace_request().SerializeToString(), headers=PB)
    assert ok.status_code == 200


@pytest.mark.parametrize("server", [1024 * 1024], indirect=True)
async def test_gzip_bomb_is_413(server: Server) -> None:
    bomb = gzip.compress(bytes(50 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 1024 * 1024
    started = time.monotonic()
    response = await server.client.post("/v1/traces", content=bomb, headers={**PB, "Content-Encoding": "gzip"})
    assert response.status_code == 413 and "decompressed" in _status(response).message
    assert time.monotonic() - started < 5 and server.consumer.calls == 0


async def test_queue_full_is_503_with_retry_after(server: Server) -> None:
    server.consumer.errors.append(QueueFullError("assembly window is full", retry_after=1.2))
    response = await server.client.post("/v1/traces", content=trace_request(2).SerializeToString(), headers=PB)
    assert response.status_code == 503 and response.headers["retry-after"] == "2"
    status = status_pb2.Status.FromString(response.content)
    info = error_details_pb2.RetryInfo()
    assert status.code == code_pb2.UNAVAILABLE and status.message == "assembly window is full"
    assert status.details[0].Unpack(info) and info.retry_delay.ToNanoseconds() == 1_200_000_000
    await asyncio.sleep(REFUSAL_HOLD)  # past the hold in which requests are refused before decoding
    server.consumer.errors.append(QueueFullError("full", retry_after=0.2))
    response = await server.client.post("/v1/traces", content=json.dumps(SPAN_JSON), headers=JSON)
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
    assert response.json()["details"][0]["@type"].endswith("google.rpc.RetryInfo")
    assert server.metric("evald_receiver_refused_spans_total", reason="queue_full") == 3


async def test_permanent_error_is_400(server: Server) -> None:
    server.consumer.errors.append(PermanentError("never"))
    response = await server.client.post("/v1/logs", content=logs_request().SerializeToString(), headers=PB)
    assert response.status_code == 400 and _status(response).message == "never"


async def test_unexpected_error_is_500_and_the_server_keeps_serving(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.consumer.errors.append(KeyError("bug"))
    response = await server.client.post("/v1/traces", content=trace_request().SerializeToString(), headers=PB)
    assert response.status_code == 500 and _status(response).code == code_pb2.INTERNAL
    assert "unexpected error" in caplog.text
    assert server.metric("evald_receiver_requests_total", outcome="internal_error") == 1
    response = await server.client.post("/v1/traces", content=trace_request().SerializeToString(), headers=PB)
    assert response.status_code == 200 and len(server.consumer.spans) == 1


async def test_100k_span_request(server: Server) -> None:
    body = trace_request(100_000, random_ids=True).SerializeToString()
    started = time.monotonic()
    response = await server.client.post("/v1/traces", content=gzip.compress(body, 1),
                                        headers={**PB, "Content-Encoding": "gzip"})
    assert response.status_code == 200 and response.content == b""
    assert len(server.consumer.spans) == 100_000 and time.monotonic() - started < 10


async def test_lifecycle_port_zero_idempotent_shutdown_and_bind_failure() -> None:
    telemetry = Telemetry()
    never_started = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), telemetry)
    await never_started.shutdown(1.0)
    first = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), telemetry, component_id="otlp/b")
    await first.start(RecordingConsumer())
    try:
        assert first.id == "otlp/b/http" and first.bound_port
        clash = OTLPHttpReceiver(OTLPHttpConfig(endpoint=f"127.0.0.1:{first.bound_port}"), telemetry)
        with pytest.raises(OSError):
            await clash.start(RecordingConsumer())
        await clash.shutdown(1.0)
    finally:
        await first.shutdown(1.0)
        await first.shutdown(1.0)


async def test_client_disconnect_mid_body_is_not_an_internal_error(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.receiver.bound_port)
    writer.write(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                 b"Content-Length: 1000\r\n\r\n\x0a\x03")
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    await asyncio.sleep(0.2)
    assert "unexpected error" not in caplog.text and server.consumer.calls == 0
    response = await server.client.post("/v1/traces", content=trace_request().SerializeToString(), headers=PB)
    assert response.status_code == 200


LONE_SURROGATE = {
    # a field name: protobuf's C decoder fails on it with SystemError (was 500, uncounted)
    "name": b'{"resourceSpans":[{"\\ud800":1}]}',
    # an enum value echoed in the error message (the 400 answer could not be encoded: aiohttp's traceback, uncounted)
    "echoed": b'{"resourceSpans":"\\ud800"}',
    # a string value (protobuf refuses it: 400 already)
    "value": json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "\ud800"}]}]}]}).encode(),
}


@pytest.mark.parametrize("body", LONE_SURROGATE.values(), ids=LONE_SURROGATE.keys())
async def test_a_lone_surrogate_in_json_is_400_counted_and_logs_no_traceback(
    server: Server, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(3):
        response = await server.client.post("/v1/traces", content=body, headers=JSON)
        assert response.status_code == 400 and response.json()["code"] == code_pb2.INVALID_ARGUMENT
        response.content.decode("utf-8")  # valid UTF-8 JSON, whatever was echoed
    assert server.metric("evald_receiver_requests_total", outcome="invalid_argument") == 3
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    ok = await server.client.post("/v1/traces", content=json.dumps(SPAN_JSON), headers=JSON)
    assert ok.status_code == 200
