"""End to end: `evald run` as a subprocess, the real OpenTelemetry SDK exporters sending GenAI spans."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Status, StatusCode
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.daemon import Daemon

pytestmark = pytest.mark.integration

CONFIG = """
assembly: { settle: 200ms, decision_wait: 5s }
metrics:
  - kind: error_free
    scope: all
  - kind: contains
    scope: trace
    options: { values: ["Paris"] }
  - kind: json_valid
    scope: llm_call
pipeline: { workers: 2, shutdown_timeout: 5s }
"""


def send_chat_trace(exporter: SpanExporter, service: str, answer: str, fail: bool = False) -> str:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.e2e")
    with tracer.start_as_current_span("invoke_agent geo-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "geo-agent")
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", 12)
            chat.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "What is the capital of France?"}]}]))
            if fail:
                chat.set_attribute("error.type", "openai.InternalServerError")
                chat.set_status(Status(StatusCode.ERROR, "HTTP 500"))
            else:
                chat.set_attribute("gen_ai.response.model", "gpt-4o-mini-2024-07-18")
                chat.set_attribute("gen_ai.usage.output_tokens", 7)
                chat.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]))
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    return trace_id


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for (n, lbls), v in samples(text).items():
        if n == name and set(labels.items()) <= set(lbls):
            total += v
    return total


def wait_for(daemon: Daemon, predicate, timeout: float = 15.0) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = daemon.scrape()
        if predicate(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"condition not met; last scrape:\n{text}\n--- evald log:\n{daemon.log()}")


def test_scores_arrive_in_prometheus_from_real_sdk_exporters(tmp_path: Path) -> None:
    with Daemon(tmp_path, CONFIG) as daemon:
        def grpc_exp() -> GrpcSpanExporter:  # a provider's shutdown shuts its exporter down: one per trace
            return GrpcSpanExporter(endpoint=f"127.0.0.1:{daemon.grpc_port}", insecure=True)

        http_exp = HttpSpanExporter(endpoint=f"http://127.0.0.1:{daemon.http_port}/v1/traces")
        send_chat_trace(grpc_exp(), "geo-grpc", "The capital of France is Paris.")
        send_chat_trace(http_exp, "geo-http", "I think it is Lyon.")
        send_chat_trace(grpc_exp(), "geo-grpc", "", fail=True)

        text = wait_for(daemon, lambda t: value(t, "evald_scored_cases_total", scope="trace") >= 3)
        # span counters: 2 spans per trace, 3 traces
        assert value(text, "evald_receiver_accepted_spans_total") == 6
        assert value(text, "evald_receiver_accepted_spans_total", transport="grpc") == 4
        assert value(text, "evald_receiver_accepted_spans_total", transport="http") == 2
        # contains(Paris): pass on grpc's right answer, fail on http's wrong one, skipped for the failed call
        assert value(text, "evald_evaluations_total", metric="contains", outcome="pass", service_name="geo-grpc") == 1
        assert value(text, "evald_evaluations_total", metric="contains", outcome="fail", service_name="geo-http") == 1
        assert value(text, "evald_evaluations_total", metric="contains", outcome="skipped") == 1
        # error_free at both scopes: the failed call fails twice (its llm_call case and its trace case)
        assert value(text, "evald_evaluations_total", metric="error_free", outcome="fail") == 2
        assert value(text, "evald_evaluations_total", metric="error_free", outcome="pass") == 4
        # json_valid: the answers are prose -> fail; the failed call has no output -> skipped
        assert value(text, "evald_evaluations_total", metric="json_valid", outcome="fail", scope="llm_call") == 2
        # the score histogram and the rolling pass-rate gauge
        assert value(text, "evald_score_count", metric="error_free", dimension="performance") == 6
        assert value(text, "evald_pass_rate_ratio", metric="contains", service_name="geo-grpc") == 1.0
        assert value(text, "evald_pass_rate_ratio", metric="contains", service_name="geo-http") == 0.0
        # no trace id ever becomes a label value
        assert "trace_id" not in text
        assert daemon.stop() == 0
    assert "evald stopped" in daemon.log()


def test_non_genai_traces_are_accepted_and_ignored(tmp_path: Path) -> None:
    with Daemon(tmp_path, CONFIG) as daemon:
        provider = TracerProvider(resource=Resource.create({"service.name": "plain-web"}))
        provider.add_span_processor(SimpleSpanProcessor(
            GrpcSpanExporter(endpoint=f"127.0.0.1:{daemon.grpc_port}", insecure=True)))
        with provider.get_tracer("t").start_as_current_span("GET /"):
            pass
        provider.shutdown()
        text = wait_for(daemon, lambda t: value(t, "evald_traces_ignored_total", reason="no_genai_spans") >= 1)
        assert value(text, "evald_receiver_accepted_spans_total") == 1
        assert value(text, "evald_scored_cases_total") == 0
