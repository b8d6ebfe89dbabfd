from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from evald.errors import PermanentError, QueueFullError
from evald.model import ConsumeResult
from evald.receivers.otlp import OTLPGrpcConfig
from evald.receivers.otlp_grpc import LOGS_SERVICE, TRACE_SERVICE, OTLPGrpcReceiver
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, logs_request, sample, trace_request

pytestmark = pytest.mark.integration


@dataclass
class Server:
    receiver: OTLPGrpcReceiver
    consumer: RecordingConsumer
    telemetry: Telemetry

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.receiver.bound_port}"

    def metric(self, name: str, **labels: str) -> float:
        return sample(self.telemetry.registry, name, receiver="otlp", transport="grpc", **labels)


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    mib = getattr(request, "param", 4)
    telemetry = Telemetry()
    receiver = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint="127.0.0.1:0", max_recv_msg_size_mib=mib), telemetry)
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        yield Server(receiver, consumer, telemetry)
    finally:
        await receiver.shutdown(1.0)


async def _call(server: Server, method: str, body: bytes, compression: grpc.Compression | None = None) -> bytes:
    async with grpc.aio.insecure_channel(server.address) as channel:
        call = channel.unary_unary(method)
        result: bytes = await call(body, timeout=10, compression=compression)
        return result


TRACES = f"/{TRACE_SERVICE}/Export"
LOGS = f"/{LOGS_SERVICE}/Export"


async def test_sdk_span_exporter_delivers_spans(server: Server) -> None:
    def send() -> None:
        provider = TracerProvider(resource=Resource.create({"service.name": "chat-api"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=server.address, insecure=True)))
        tracer = provider.get_tracer("test.instrumentation", "0.1")
        with tracer.start_as_current_span("agent"), tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.usage.input_tokens", 12)
            span.set_attribute("tags", ["a", "b"])
            span.add_event("gen_ai.choice", {"index": 0})
        assert provider.force_flush(10_000)
        provider.shutdown()

    await asyncio.to_thread(send)
    spans = {s.name: s for s in server.consumer.spans}
    assert set(spans) == {"agent", "chat gpt-4o"}
    chat = spans["chat gpt-4o"]
    assert chat.parent_span_id == spans["agent"].span_id and chat.trace_id == spans["agent"].trace_id
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12 and chat.attributes["tags"] == ["a", "b"]
    assert chat.events[0].name == "gen_ai.choice" and chat.resource["service.name"] == "chat-api"
    assert chat.scope_name == "test.instrumentation" and chat.scope_version == "0.1"
    assert server.consumer.batches[0].source == "otlp"
    assert server.metric("evald_receiver_accepted_spans_total") == 2
    assert server.metric("evald_receiver_requests_total", outcome="success") >= 1


async def test_sdk_log_exporter_delivers_log_records(server: Server) -> None:
    def send() -> None:
        tracer_provider = TracerProvider()
        provider = LoggerProvider()
        provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=server.address,
                                                                                   insecure=True)))
        with tracer_provider.get_tracer("t").start_as_current_span("chat"):
            provider.get_logger("genai").emit(event_name="gen_ai.client.inference.operation.details",
                                              body={"content": "Paris"}, attributes={"k": "v"})
        provider.shutdown()

    await asyncio.to_thread(send)
    (rec,) = server.consumer.logs
    assert rec.event_name == "gen_ai.client.inference.operation.details" and rec.body == {"content": "Paris"}
    assert len(rec.trace_id) == 32 and rec.span_id is not None and rec.attributes == {"k": "v"}
    assert server.metric("evald_receiver_accepted_log_records_total") == 1


async def test_gzip_compressed_request(server: Server) -> None:
    body = await _call(server, TRACES, trace_request(3).SerializeToString(), grpc.Compression.Gzip)
    assert not ExportTraceServiceResponse.FromString(body).HasField("partial_success")
    assert len(server.consumer.spans) == 3


async def test_partial_success_for_invalid_ids(server: Server) -> None:
    req = trace_request(3)
    req.resource_spans[0].scope_spans[0].spans[1].trace_id = bytes(16)
    response = ExportTraceServiceResponse.FromString(await _call(server, TRACES, req.SerializeToString()))
    assert response.partial_success.rejected_spans == 1
    assert "invalid_id" in response.partial_success.error_message
    assert len(server.consumer.spans) == 2
    assert server.metric("evald_receiver_refused_spans_total", reason="invalid_id") == 1
    assert server.metric("evald_receiver_requests_total", outcome="partial_success") == 1


async def test_window_rejections_are_reported_as_partial_success(server: Server) -> None:
    server.consumer.result = ConsumeResult(rejected_logs=1, message="trace too large")
    response = ExportLogsServiceResponse.FromString(await _call(server, LOGS, logs_request(2).SerializeToString()))
    assert response.partial_success.rejected_log_records == 1
    assert response.partial_success.error_message == "trace too large"
    assert server.metric("evald_receiver_accepted_log_records_total") == 1
    assert server.metric("evald_receiver_refused_log_records_total", reason="consumer_rejected") == 1


async def test_empty_request_is_a_success(server: Server) -> None:
    assert await _call(server, TRACES, b"") == b""
    assert server.consumer.calls == 0


async def test_truncated_protobuf_is_invalid_argument(server: Server) -> None:
    body = trace_request(2).SerializeToString()[:-7]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _call(server, TRACES, body)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cannot decode ExportTraceServiceRequest" in (info.value.details() or "")
    assert server.metric("evald_receiver_requests_total", outcome="invalid_argument") == 1


async def test_permanent_error_is_invalid_argument(server: Server) -> None:
    server.consumer.errors.append(PermanentError("bad spans"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _call(server, TRACES, trace_request().SerializeToString())
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and info.value.details() == "bad spans"


async def test_queue_full_is_unavailable_with_retry_info(server: Server) -> None:
    server.consumer.errors.append(QueueFullError("assembly window is full", retry_after=1.5))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _call(server, TRACES, trace_request(4).SerializeToString())
    err = info.value
    assert err.code() == grpc.StatusCode.UNAVAILABLE and err.details() == "assembly window is full"
    trailers = dict(err.trailing_metadata() or ())
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    assert status.code == code_pb2.UNAVAILABLE
    detail = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(detail) and detail.retry_delay.ToNanoseconds() == 1_500_000_000
    assert error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]) == detail
    assert server.metric("evald_receiver_refused_spans_total", reason="queue_full") == 4
    assert server.metric("evald_receiver_requests_total", outcome="queue_full") == 1


async def test_sdk_exporter_retries_after_retry_info(server: Server) -> None:
    server.consumer.errors.append(QueueFullError("full", retry_after=0.1))

    def send() -> float:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.address, insecure=True)))
        started = time.monotonic()
        with provider.get_tracer("t").start_as_current_span("retried"):
            pass
        provider.shutdown()
        return time.monotonic() - started

    elapsed = await asyncio.to_thread(send)
    assert server.consumer.calls == 2 and [s.name for s in server.consumer.spans] == ["retried"]
    assert elapsed < 5  # honoured the 0.1 s hint rather than its own 1 s+ backoff


async def test_unexpected_error_is_internal_and_the_server_keeps_serving(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.consumer.errors.append(RuntimeError("bug"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _call(server, TRACES, trace_request().SerializeToString())
    assert info.value.code() == grpc.StatusCode.INTERNAL and "RuntimeError" in (info.value.details() or "")
    assert "unexpected error" in caplog.text and "RuntimeError: bug" in caplog.text
    await _call(server, TRACES, trace_request().SerializeToString())
    assert len(server.consumer.spans) == 1


@pytest.mark.parametrize("server", [1], indirect=True)
async def test_oversize_message_is_resource_exhausted(server: Server) -> None:
    big = trace_request(1, attributes={"blob": "x" * (1024 * 1024 + 10)}).SerializeToString()
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await _call(server, TRACES, big)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert server.consumer.calls == 0


@pytest.mark.parametrize("server", [16], indirect=True)
async def test_100k_span_request(server: Server) -> None:
    body = trace_request(100_000, random_ids=True).SerializeToString()
    started = time.monotonic()
    assert await _call(server, TRACES, body) == b""
    assert len(server.consumer.spans) == 100_000 and time.monotonic() - started < 10
    assert server.metric("evald_receiver_accepted_spans_total") == 100_000


async def test_lifecycle_port_zero_idempotent_shutdown_and_bind_failure() -> None:
    telemetry = Telemetry()
    never_started = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint="127.0.0.1:0"), telemetry)
    await never_started.shutdown(1.0)
    await never_started.shutdown(1.0)
    first = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint="127.0.0.1:0"), telemetry, component_id="otlp/a")
    await first.start(RecordingConsumer())
    try:
        assert first.id == "otlp/a/grpc" and first.bound_port
        clash = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint=f"127.0.0.1:{first.bound_port}"), telemetry)
        with pytest.raises(OSError):
            await clash.start(RecordingConsumer())
        await clash.shutdown(1.0)
    finally:
        await first.shutdown(1.0)
        await first.shutdown(1.0)
