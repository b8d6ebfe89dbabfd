"""The running daemon under hostile input: every bad request gets a clear answer, nothing crashes, drops are counted.

The receivers' own tests cover each rule in depth; here the whole `evald run` process takes the input (a 100k-span
trace, malformed protobuf and JSON, wrong content types, an oversize body) and must stay healthy and keep scoring.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

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
