"""The running daemon under hostile input: every bad request gets a clear answer, nothing crashes, drops are counted.

The receivers' own tests cover each rule in depth; here the whole `evald run` process takes the input (a 100k-span
trace, malformed protobuf and JSON, wrong content types, an oversize body) and must stay healthy and keep scoring.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import value, wait_for

pytestmark = pytest.mark.integration

CONFIG = """
assembly: { settle: 200ms, decision_wait: 5s, max_spans_per_trace: 2000 }
metrics:
  - { kind: error_free, scope: all }
pipeline: { workers: 2, shutdown_timeout: 5s }
"""
TRACE_ID = bytes.fromhex("5b8efff798038103d269b633813fc60c")
TRACES_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def genai_trace(children: int) -> ExportTraceServiceRequest:
    """One trace: a GenAI chat root span and ``children`` plain child spans."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.add(key="service.name").value.string_value = "huge-trace"
    scope_spans = resource_spans.scope_spans.add()
    root = scope_spans.spans.add(trace_id=TRACE_ID, span_id=(1).to_bytes(8, "big"), name="chat m",
                                 kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1, end_time_unix_nano=2_000_000)
    for key, text in (("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "m"),
                      ("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [
                          {"type": "text", "content": "hi"}]}])),
                      ("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                          {"type": "text", "content": "hello"}]}]))):
        root.attributes.add(key=key).value.string_value = text
    for i in range(children):
        scope_spans.spans.add(trace_id=TRACE_ID, span_id=(i + 2).to_bytes(8, "big"), parent_span_id=root.span_id,
                              name=f"step-{i}", start_time_unix_nano=1, end_time_unix_nano=2)
    return request


def test_a_trace_with_100k_spans_is_truncated_reported_and_still_scored(tmp_path: Path) -> None:
    with Daemon(tmp_path, CONFIG) as daemon:
        body = genai_trace(99_999).SerializeToString()
        with grpc.insecure_channel(f"127.0.0.1:{daemon.grpc_port}",
                                   options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
            export = channel.unary_unary(TRACES_PATH, request_serializer=lambda b: b,
                                         response_deserializer=ExportTraceServiceResponse.FromString)
            response = export(body, timeout=60)
        # OTLP partial success: the spans past max_spans_per_trace are rejected and said so
        assert response.partial_success.rejected_spans == 100_000 - 2_000
        assert "max_spans_per_trace (2000)" in response.partial_success.error_message
        text = wait_for(daemon, lambda t: value(t, "evald_scored_cases_total", scope="trace") >= 1, timeout=30)
        assert value(text, "evald_receiver_accepted_spans_total") == 2_000
        assert value(text, "evald_receiver_refused_spans_total", reason="consumer_rejected") == 98_000
        assert value(text, "evald_evaluations_total", metric="error_free", outcome="pass") == 2
        assert httpx.get(f"{daemon.metrics_url}/healthz", timeout=2).status_code == 200
        assert daemon.stop() == 0


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b"\x0a\xff\xff\xff\xff", {"content-type": "application/x-protobuf"}, 400, "protobuf"),
        (b'{"resourceSpans": [', {"content-type": "application/json"}, 400, "JSON"),
        (b"hello", {"content-type": "text/plain"}, 415, "application/x-protobuf"),
        (gzip.compress(b"\x00" * (17 << 20)), {"content-type": "application/x-protobuf",
                                                 "content-encoding": "gzip"}, 413, "limit"),
        (b"garbage-not-gzip", {"content-type": "application/x-protobuf", "content-encoding": "gzip"}, 400, "gzip"),
    ],
    ids=["truncated-protobuf", "invalid-json", "wrong-content-type", "gzip-bomb-over-16MiB", "bad-gzip"],
)
def test_bad_http_requests_get_clear_errors_and_the_daemon_keeps_serving(
    tmp_path: Path, body: bytes, headers: dict[str, str], status: int, message: str
) -> None:
    with Daemon(tmp_path, CONFIG) as daemon:
        url = f"http://127.0.0.1:{daemon.http_port}/v1/traces"
        response = httpx.post(url, content=body, headers=headers, timeout=30)
        assert response.status_code == status, response.text
        assert message.lower() in response.text.lower(), response.text
        # still serving: a valid request right after is accepted and scored
        good = genai_trace(0).SerializeToString()
        ok = httpx.post(url, content=good, headers={"content-type": "application/x-protobuf"}, timeout=10)
        assert ok.status_code == 200
        wait_for(daemon, lambda t: value(t, "evald_scored_cases_total", scope="trace") >= 1)
        assert daemon.stop() == 0


# -- connections: file descriptors, slowloris, idle --------------------------------------------------------------

NOFILE = 1024
IDLE_CONNECTIONS = 1_100


def start_with_nofile(daemon: Daemon, nofile: int = NOFILE, timeout: float = 20.0) -> Daemon:
    """``evald run`` as ``Daemon.start`` does, with its open-file limit lowered to ``nofile`` (a container default),
    soft and hard: evald raises its soft limit to the hard one at start (connection_limits.raise_open_file_limit)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with daemon.log_path.open("wb") as log:
        daemon.proc = subprocess.Popen(
            [sys.executable, "-m", "evald", "run", "--config", str(daemon.config_path)], stdout=log,
            stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=limit)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and daemon.proc.poll() is None:
        try:
            if httpx.get(f"{daemon.metrics_url}/readyz", timeout=0.5).status_code == 200:
                return daemon
        except httpx.HTTPError:
            time.sleep(0.1)
    daemon.stop()
    raise RuntimeError(f"evald did not become ready:\n{daemon.log()}")


@pytest.fixture
def many_sockets() -> Iterator[list[socket.socket]]:
    """Room for this test's own 1,100 sockets; every socket appended is closed at the end."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    sockets: list[socket.socket] = []
    try:
        yield sockets
    finally:
        for sock in sockets:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_idle(port: int, n: int, sockets: list[socket.socket]) -> None:
    for _ in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sockets.append(sock)


def export_one_span(port: int) -> float:
    """A real OTLP/HTTP export through the SDK exporter; how long it took (it must succeed)."""
    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=5)
    provider = TracerProvider()
    with provider.get_tracer("t").start_as_current_span("chat") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
    started = time.monotonic()
    result = exporter.export([span])  # type: ignore[list-item]
    took = time.monotonic() - started
    assert result == SpanExportResult.SUCCESS
    return took


def healthz_seconds(daemon: Daemon) -> float:
    started = time.monotonic()
    assert httpx.get(f"{daemon.metrics_url}/healthz", timeout=5).status_code == 200
    return time.monotonic() - started


@pytest.mark.parametrize("http_limits", ["{}", "{ max_connections: 5000 }"], ids=["auto-cap", "cap-over-fd-limit"])
def test_1100_idle_connections_under_a_1024_fd_limit_do_not_take_evald_offline(
    tmp_path: Path, many_sockets: list[socket.socket], http_limits: str
) -> None:
    daemon = Daemon(tmp_path, CONFIG)
    config = daemon.config_path.read_text().replace(
        f'http: {{ endpoint: "127.0.0.1:{daemon.http_port}" }}',
        f'http: {{ endpoint: "127.0.0.1:{daemon.http_port}", {http_limits.strip("{} ")} }}')
    daemon.config_path.write_text(config)
    start_with_nofile(daemon)
    try:
        started = time.monotonic()
        open_idle(daemon.http_port, IDLE_CONNECTIONS, many_sockets)
        opened = time.monotonic() - started
        assert healthz_seconds(daemon) < 2
        assert export_one_span(daemon.http_port) < 2
        with grpc.insecure_channel(f"127.0.0.1:{daemon.grpc_port}") as channel:
            export = channel.unary_unary(TRACES_PATH, request_serializer=lambda b: b,
                                         response_deserializer=ExportTraceServiceResponse.FromString)
            export(genai_trace(0).SerializeToString(), timeout=2)
        text = daemon.scrape()
        open_now = value(text, "evald_listener_connections", listener="otlp/http")
        if http_limits == "{}":  # auto: half of (1024 - 256)
            assert open_now <= 384 and value(text, "evald_listener_connections_closed_total", reason="evicted") > 0
        else:  # the cap is over the fd limit: accept() failed, idle connections were closed to free descriptors
            assert value(text, "evald_listener_connections_refused_total", reason="fd_exhausted") > 0
        assert daemon.stop() == 0
    finally:
        daemon.stop()
    log = daemon.log()
    lines = log.splitlines()
    assert "Traceback" not in log and len(lines) < 40, (opened, log[-3000:])
    if http_limits != "{}":
        warnings = [line for line in lines if "accept() failed" in line]
        assert 1 <= len(warnings) <= 4, warnings


SLOW = "{ read_header_timeout: 1s, read_timeout: 1s }"


def test_slowloris_headers_and_slow_bodies_are_closed_by_the_daemon(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, CONFIG)
    config = daemon.config_path.read_text().replace(
        f'http: {{ endpoint: "127.0.0.1:{daemon.http_port}" }}',
        f'http: {{ endpoint: "127.0.0.1:{daemon.http_port}", {SLOW.strip("{} ")} }}')
    daemon.config_path.write_text(config)
    with daemon:
        headers = socket.create_connection(("127.0.0.1", daemon.http_port), timeout=5)
        headers.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")
        body = socket.create_connection(("127.0.0.1", daemon.http_port), timeout=5)
        body.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                     b"Content-Length: 5000\r\n\r\n\x0a")
        started = time.monotonic()
        for _ in range(10):  # a header byte every 0.2 s: never complete
            time.sleep(0.2)
            with contextlib.suppress(OSError):
                headers.sendall(b"X")
        assert recv_all(headers) == b""  # closed without an answer
        answer = recv_all(body)
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 4
        text = daemon.scrape()
        assert value(text, "evald_listener_connections_closed_total", reason="header_timeout") == 1
        assert value(text, "evald_receiver_requests_total", outcome="read_timeout") == 1
        headers.close()
        body.close()


def recv_all(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data
