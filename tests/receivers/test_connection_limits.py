"""Connection hygiene of the OTLP/HTTP and admin listeners, with raw sockets as the hostile clients and the OTel SDK
exporter as the well-behaved one: slow headers, idle keep-alive, slow bodies, unread responses, the connection cap."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client import Gauge

from evald.exporters.admin_http import AdminHttpServer
from evald.receivers.connection_limits import ListenerLimitsConfig
from evald.receivers.otlp import OTLPHttpConfig
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.receivers.tls import ServerTLSConfig
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, sample, trace_request
from tests.receivers.tls_certs import make_pki

pytestmark = pytest.mark.integration

FAST = {"read_header_timeout": 0.4, "read_timeout": 0.4, "write_timeout": 0.4, "idle_timeout": 0.6}


@dataclass
class Server:
    receiver: OTLPHttpReceiver
    consumer: RecordingConsumer
    telemetry: Telemetry

    @property
    def port(self) -> int:
        assert self.receiver.bound_port is not None
        return self.receiver.bound_port

    def closed(self, reason: str) -> float:
        return sample(self.telemetry.registry, "evald_listener_connections_closed_total", listener="otlp/http",
                      reason=reason)


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    extra = getattr(request, "param", {})
    telemetry = Telemetry()
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0", **{**FAST, **extra}), telemetry)
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        yield Server(receiver, consumer, telemetry)
    finally:
        await receiver.shutdown(1.0)


async def connect(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return sock


async def read_until_closed(sock: socket.socket, timeout: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    data = b""
    async with asyncio.timeout(timeout):
        while chunk := await loop.sock_recv(sock, 65536):
            data += chunk
    return data, time.monotonic() - started


def request_head(port: int, length: int, *, keep_alive: bool = True) -> bytes:
    return (f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-protobuf\r\n"
            f"Content-Length: {length}\r\nConnection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n").encode()


async def test_a_connection_that_sends_nothing_is_closed_after_read_header_timeout(server: Server) -> None:
    sock = await connect(server.port)
    data, took = await read_until_closed(sock, 5)
    assert data == b"" and 0.3 < took < 2
    assert server.closed("header_timeout") == 1
    sock.close()


async def test_slowloris_headers_are_closed_even_while_bytes_keep_coming(server: Server) -> None:
    sock = await connect(server.port)
    loop = asyncio.get_running_loop()

    async def trickle() -> None:
        await loop.sock_sendall(sock, b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")
        for _ in range(40):
            await asyncio.sleep(0.05)
            await loop.sock_sendall(sock, b"X")

    sender = asyncio.create_task(trickle())
    data, took = await read_until_closed(sock, 5)
    sender.cancel()
    await asyncio.gather(sender, return_exceptions=True)
    assert data == b"" and took < 2
    assert server.closed("header_timeout") == 1
    sock.close()


async def test_an_idle_keep_alive_connection_is_closed_after_idle_timeout(server: Server) -> None:
    sock = await connect(server.port)
    body = trace_request(1).SerializeToString()
    await asyncio.get_running_loop().sock_sendall(sock, request_head(server.port, len(body)) + body)
    data, took = await read_until_closed(sock, 5)
    assert data.startswith(b"HTTP/1.1 200") and 0.5 < took < 2.5  # answered, kept alive, then closed when idle
    assert server.closed("idle_timeout") == 1 and len(server.consumer.spans) == 1
    sock.close()


async def test_a_slow_body_is_answered_408_and_the_connection_closed(server: Server) -> None:
    sock = await connect(server.port)
    await asyncio.get_running_loop().sock_sendall(sock, request_head(server.port, 1000) + b"\x0a\x05")
    data, took = await read_until_closed(sock, 5)
    assert data.startswith(b"HTTP/1.1 408") and b"read_timeout" in data and took < 2
    assert sample(server.telemetry.registry, "evald_receiver_requests_total", receiver="otlp", transport="http",
                  outcome="read_timeout") == 1
    assert server.consumer.calls == 0
    sock.close()


async def test_a_metrics_response_left_unread_is_abandoned_after_write_timeout() -> None:
    telemetry = Telemetry()
    big = Gauge("test_padding", "Series that make /metrics several MB.", ["name"], registry=telemetry.registry)
    for i in range(8_000):  # about 7 MB: more than the kernel buffers while the client reads nothing
        big.labels(f"series-{i:06d}-" + "x" * 800).set(i)
    admin = AdminHttpServer("127.0.0.1:0", telemetry, limits=ListenerLimitsConfig(write_timeout=0.5))
    await admin.start()
    try:
        assert admin.bound_port is not None
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and never read: the server's buffer fills
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", admin.bound_port))
        await asyncio.get_running_loop().sock_sendall(sock, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        closed = lambda: sample(telemetry.registry, "evald_listener_connections_closed_total",  # noqa: E731
                                listener="admin", reason="write_timeout")
        for _ in range(200):  # 10 s at most
            if closed():
                break
            await asyncio.sleep(0.05)
        assert closed() == 1
        assert sample(telemetry.registry, "evald_listener_connections", listener="admin") == 0
        sock.close()
    finally:
        await admin.shutdown(1.0)


@pytest.mark.parametrize("server", [{"max_connections": 4, "read_header_timeout": 30, "idle_timeout": 30}],
                         indirect=True)
async def test_at_the_cap_the_oldest_idle_connection_makes_room_for_a_real_exporter(server: Server) -> None:
    idle = [await connect(server.port) for _ in range(4)]
    await asyncio.sleep(0.1)

    def export() -> bool:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{server.port}/v1/traces", timeout=5)))
        with provider.get_tracer("t").start_as_current_span("chat"):
            pass
        provider.shutdown()
        return True

    started = time.monotonic()
    assert await asyncio.to_thread(export)
    assert time.monotonic() - started < 2 and [s.name for s in server.consumer.spans] == ["chat"]
    data, _ = await read_until_closed(idle[0], 2)  # the oldest idle connection was the one closed
    assert data == b"" and server.closed("evicted") == 1
    for sock in idle:
        sock.close()


@pytest.mark.parametrize("server", [{"max_connections": 2, "read_header_timeout": 30, "read_timeout": 30}],
                         indirect=True)
async def test_when_every_connection_is_in_a_request_a_new_one_gets_503(server: Server) -> None:
    busy = [await connect(server.port) for _ in range(2)]
    for sock in busy:  # headers complete, body pending: in a request, not evictable
        await asyncio.get_running_loop().sock_sendall(sock, request_head(server.port, 100) + b"\x0a")
    await asyncio.sleep(0.2)
    extra = await connect(server.port)
    data, _ = await read_until_closed(extra, 2)
    assert data.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in data
    assert sample(server.telemetry.registry, "evald_listener_connections_refused_total", listener="otlp/http",
                  reason="max_connections") == 1
    assert sample(server.telemetry.registry, "evald_listener_connections", listener="otlp/http") == 2
    for sock in [*busy, extra]:
        sock.close()


async def test_the_admin_listener_closes_slow_headers_and_still_answers_healthz() -> None:
    telemetry = Telemetry()
    admin = AdminHttpServer("127.0.0.1:0", telemetry, limits=ListenerLimitsConfig(read_header_timeout=0.4,
                                                                                    max_connections=3))
    await admin.start()
    try:
        assert admin.bound_port is not None
        stuck = [await connect(admin.bound_port) for _ in range(3)]
        await asyncio.get_running_loop().sock_sendall(stuck[0], b"GET /healthz HTTP/1.1\r\nHost: x")
        async with httpx.AsyncClient() as client:
            started = time.monotonic()
            response = await client.get(f"http://127.0.0.1:{admin.bound_port}/healthz", timeout=2)
        assert response.status_code == 200 and time.monotonic() - started < 1  # an idle one made room
        for sock in stuck[1:]:
            data, took = await read_until_closed(sock, 3)
            assert data == b"" and took < 1.5
        assert sample(telemetry.registry, "evald_listener_connections_closed_total", listener="admin",
                      reason="evicted") == 1
        for sock in stuck:
            sock.close()
    finally:
        await admin.shutdown(1.0)


async def test_over_tls_a_stalled_handshake_is_closed_and_a_slowloris_after_it_too(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    tls = ServerTLSConfig.model_validate({"cert_file": str(pki.server_cert), "key_file": str(pki.server_key)})
    telemetry = Telemetry()
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0", tls=tls, **FAST), telemetry)
    await receiver.start(RecordingConsumer())
    try:
        assert receiver.bound_port is not None
        stalled = await connect(receiver.bound_port)  # TCP only: never starts the TLS handshake
        data, took = await read_until_closed(stalled, 5)
        assert data == b"" and took < 2
        context = ssl.create_default_context(cafile=str(pki.ca))
        reader, writer = await asyncio.open_connection("127.0.0.1", receiver.bound_port, ssl=context,
                                                      server_hostname="localhost")
        writer.write(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        started = time.monotonic()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        assert time.monotonic() - started < 2
        writer.close()
        assert sample(telemetry.registry, "evald_listener_connections_closed_total", listener="otlp/http",
                      reason="header_timeout") == 1
        assert sample(telemetry.registry, "evald_listener_connections", listener="otlp/http") == 0
        stalled.close()
    finally:
        await receiver.shutdown(1.0)


async def test_telemetry_listener_limits_reach_the_services_admin_listener() -> None:
    from evald.config.loader import parse_config
    from evald.service import EvaldService

    config = parse_config("receivers: {}\nexporters: {}\ntelemetry:\n  endpoint: 127.0.0.1:0\n"
                          "  listener: { read_header_timeout: 300ms, max_connections: 5 }\n")
    service = EvaldService(config, with_receivers=False)
    await service.admin.start()
    try:
        assert service.admin.limits.max_connections == 5
        sock = await connect(service.admin.bound_port)
        data, took = await read_until_closed(sock, 5)  # the default would wait 10 s
        assert data == b"" and 0.2 < took < 1.5
        sock.close()
        assert sample(service.telemetry.registry, "evald_listener_connections_closed_total", listener="admin",
                      reason="header_timeout") == 1
    finally:
        await service.admin.shutdown(1.0)


def test_evald_raises_its_open_file_soft_limit_to_the_hard_limit() -> None:
    import resource
    import subprocess
    import sys

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(512, hard)
    script = ("import logging, resource, sys\n"
              "logging.basicConfig(level=logging.INFO, stream=sys.stdout, format='%(message)s')\n"
              f"resource.setrlimit(resource.RLIMIT_NOFILE, ({low}, {hard}))\n"
              "from evald.receivers.connection_limits import auto_max_connections, raise_open_file_limit\n"
              "print(raise_open_file_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0], auto_max_connections())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True).stdout
    log, numbers = out.strip().splitlines()
    returned, soft, cap = (int(x) for x in numbers.split())
    assert returned == soft == hard
    assert cap == max(16, min(8192, (hard - 256) // 2))
    assert log == (f"open-file limit (RLIMIT_NOFILE): raised from {low} to the hard limit {hard}" if hard != low
                   else f"open-file limit (RLIMIT_NOFILE): {hard} (already the hard limit)")
