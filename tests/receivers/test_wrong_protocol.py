"""OTLP/gRPC sent to the OTLP/HTTP port (evald/receivers/wrong_protocol.py): the real OTel gRPC exporter against a
running receiver pair, and the sniffer's edge cases on raw sockets."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from evald.receivers.otlp import OTLPReceiverConfig, build_otlp_receivers
from evald.receivers.otlp_grpc import OTLPGrpcReceiver
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, sample, trace_request

pytestmark = pytest.mark.integration

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


@dataclass
class Pair:
    grpc: OTLPGrpcReceiver | None
    http: OTLPHttpReceiver
    telemetry: Telemetry
    consumer: RecordingConsumer

    def wrong_protocol(self) -> float:
        return sample(self.telemetry.registry, "evald_receiver_requests_total", receiver="otlp", transport="http",
                      outcome="wrong_protocol")


async def start_pair(grpc: bool = True) -> Pair:
    block = {"http": {"endpoint": "127.0.0.1:0"}, "grpc": {"endpoint": "127.0.0.1:0"} if grpc else None}
    telemetry, consumer = Telemetry(), RecordingConsumer()
    receivers = build_otlp_receivers(OTLPReceiverConfig.model_validate(block), telemetry)
    for receiver in receivers:
        await receiver.start(consumer)
    grpc_receiver = next((r for r in receivers if isinstance(r, OTLPGrpcReceiver)), None)
    (http_receiver,) = (r for r in receivers if isinstance(r, OTLPHttpReceiver))
    return Pair(grpc_receiver, http_receiver, telemetry, consumer)


async def stop_pair(pair: Pair) -> None:
    await pair.http.shutdown(1.0)
    if pair.grpc is not None:
        await pair.grpc.shutdown(1.0)


@pytest.fixture
async def pair() -> AsyncIterator[Pair]:
    started = await start_pair()
    try:
        yield started
    finally:
        await stop_pair(started)


def server_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What the server side logged (the exporter's own complaints are the client's)."""
    return [r for r in caplog.records if r.name.startswith(("evald", "aiohttp"))]


def export_over_grpc(port: int) -> None:
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, timeout=1.5)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.get_tracer("wrong-port").start_span("chat").end()
    provider.shutdown()


async def test_the_otel_grpc_exporter_on_the_http_port_is_one_warning_and_counted(
    pair: Pair, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert pair.grpc is not None and pair.http.bound_port is not None
    for _ in range(2):  # two exporters, two channels: at least two connections
        await asyncio.to_thread(export_over_grpc, pair.http.bound_port)
    assert pair.wrong_protocol() >= 2
    records = server_records(caplog)
    warnings = [r for r in records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert warnings[0].levelno == logging.WARNING
    assert f"this looks like OTLP/gRPC; send it to :{pair.grpc.bound_port}" in message
    assert f"OTLP/HTTP port {pair.http.bound_port}" in message
    assert not any(r.exc_info or "Traceback" in r.getMessage() for r in records)
    assert "Traceback" not in caplog.text
    assert not pair.consumer.batches
    async with httpx.AsyncClient(timeout=5) as client:  # the port still serves OTLP/HTTP
        response = await client.post(f"http://127.0.0.1:{pair.http.bound_port}/v1/traces",
                                     content=trace_request().SerializeToString(),
                                     headers={"Content-Type": "application/x-protobuf"})
    assert response.status_code == 200 and len(pair.consumer.spans) == 1


async def raw_exchange(port: int, *chunks: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
            await asyncio.sleep(0.01)  # separate reads on the server
        writer.write_eof()
        async with asyncio.timeout(5):
            return await reader.read()
    finally:
        writer.close()


async def test_a_preface_split_byte_by_byte_is_recognised(pair: Pair) -> None:
    assert pair.http.bound_port is not None and pair.grpc is not None
    first_line = PREFACE[:16]  # what the server needs to see; it answers and closes then
    answer = await raw_exchange(pair.http.bound_port, *(bytes([b]) for b in first_line))
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n") and b"Connection: close" in answer
    assert f"send it to :{pair.grpc.bound_port}".encode() in answer
    assert pair.wrong_protocol() == 1


async def test_http1_requests_that_start_like_the_preface_pass_through(pair: Pair) -> None:
    assert pair.http.bound_port is not None
    body = trace_request().SerializeToString()
    request = (b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
               b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    answer = await raw_exchange(pair.http.bound_port, b"P", b"O", request[2:])  # "P" is also how "PRI" starts
    assert answer.startswith(b"HTTP/1.1 200")
    assert len(pair.consumer.spans) == 1 and pair.wrong_protocol() == 0
    answer = await raw_exchange(pair.http.bound_port, b"PRI /v1/traces HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.") and b"OTLP/gRPC" not in answer  # not the preface: aiohttp answers
    assert pair.wrong_protocol() == 0


async def test_with_grpc_disabled_the_advice_is_to_use_otlp_http(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    started = await start_pair(grpc=False)
    try:
        assert started.http.bound_port is not None
        answer = await raw_exchange(started.http.bound_port, PREFACE + SETTINGS)
    finally:
        await stop_pair(started)
    assert b"not enabled here: use OTLP/HTTP" in answer
    (warning,) = server_records(caplog)
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" in warning.getMessage()
    assert started.wrong_protocol() == 1
