"""``evald run`` with an otlp exporter: GenAI spans in, scores out through a real rotel collector to a sink.

The metrics push interval is longer than the test, so the metrics that arrive were sent by the SIGTERM shutdown
flush; every ``gen_ai.evaluation.result`` event must carry the trace and span id of the span its case judged.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.exporters.otlp_sink import OTLPSink, Rotel, attrs, eventually
from tests.integration.daemon import Daemon

pytestmark = pytest.mark.integration


def send_trace(port: int, answer: str) -> tuple[str, str, str]:
    """One agent trace with one chat call; returns (trace id, root span id, chat span id) as hex."""
    provider = TracerProvider(resource=Resource.create({"service.name": "geo-app"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True)))
    tracer = provider.get_tracer("tests.otlp")
    with tracer.start_as_current_span("invoke_agent geo-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "geo-agent")
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.response.id", f"chatcmpl-{answer[:4]}")
            chat.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "What is the capital of France?"}]}]))
            chat.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]))
    provider.shutdown()
    ctx_root, ctx_chat = root.get_span_context(), chat.get_span_context()
    return f"{ctx_root.trace_id:032x}", f"{ctx_root.span_id:016x}", f"{ctx_chat.span_id:016x}"


def scored_cases(daemon: Daemon) -> float:
    text = httpx.get(f"{daemon.metrics_url}/metrics", timeout=2).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("evald_scored_cases_total{"))


async def test_evald_run_sends_linked_events_and_flushes_metrics_on_sigterm(tmp_path: Path, sink: OTLPSink) -> None:
    rotel = Rotel(tmp_path, sink.port).start()
    try:
        config = (
            f"  otlp/collector: {{ endpoint: 'http://127.0.0.1:{rotel.grpc_port}', export_interval: 5m }}\n"
            "assembly: { settle: 200ms, decision_wait: 5s }\n"
            "metrics:\n"
            "  - { kind: error_free, scope: all }\n"
            "  - { kind: contains, scope: trace, options: { values: [Paris] } }\n"
            "pipeline: { workers: 2, shutdown_timeout: 8s }\n"
        )
        daemon = Daemon(tmp_path, config)
        await asyncio.to_thread(daemon.start)
        try:
            sent = [await asyncio.to_thread(send_trace, daemon.grpc_port, answer)
                    for answer in ("The capital of France is Paris.", "Lyon, I think.")]
            # 2 traces -> 2 trace cases + 2 llm_call cases
            assert await eventually(lambda: scored_cases(daemon) >= 4, 15), daemon.log()
        finally:
            code = await asyncio.to_thread(daemon.stop)
        assert code == 0, daemon.log()
        assert "otlp/collector: sending scores over OTLP grpc" in daemon.log()

        def events() -> list[dict[str, object]]:
            return [{**attrs(r.attributes), "ids": (r.trace_id.hex(), r.span_id.hex())}
                    for _, r in sink.log_records() if r.event_name == "gen_ai.evaluation.result"]

        # error_free on 4 cases + contains on 2 trace cases
        await sink.wait_for(lambda: len(events()) >= 6 and bool(sink.latest_points("evald.evaluation.count")))
        got = events()
        assert len(got) == 6
        for event in got:
            trace_id, span_id = event["ids"]  # type: ignore[misc]
            (root, chat), = [(r, c) for t, r, c in sent if t == trace_id]
            assert span_id == (chat if event["evald.case.scope"] == "llm_call" else root), event
        contains = {e["ids"]: e["gen_ai.evaluation.score.label"] for e in got
                    if e["gen_ai.evaluation.name"] == "contains"}
        assert contains == {(sent[0][0], sent[0][1]): "pass", (sent[1][0], sent[1][1]): "fail"}
        assert {e["evald.metric.version"] for e in got} == {"1"}  # handed over by the service (metric facts)
        llm_events = [e for e in got if e["evald.case.scope"] == "llm_call"]
        assert {e["gen_ai.response.id"] for e in llm_events} == {"chatcmpl-The ", "chatcmpl-Lyon"}

        # metrics were pushed only by the shutdown flush (export_interval is 5m)
        counts = {((a := attrs(p.attributes))["gen_ai.evaluation.name"], a["evald.case.scope"], a["evald.outcome"]):
                  p.as_int for p in sink.latest_points("evald.evaluation.count")}
        assert counts == {
            ("error_free", "trace", "pass"): 2, ("error_free", "llm_call", "pass"): 2,
            ("contains", "trace", "pass"): 1, ("contains", "trace", "fail"): 1,
        }
        points = sink.latest_points("evald.evaluation.score")
        assert {attrs(p.attributes).get("service.name") for p in points} == {"geo-app"}
        assert {attrs(p.attributes).get("gen_ai.agent.name") for p in points} == {"geo-agent"}
        exemplar_ids = {(e.trace_id.hex(), e.span_id.hex()) for e in sink.exemplars("evald.evaluation.score")}
        assert exemplar_ids <= {(t, s) for t, r, c in sent for s in (r, c)}
        assert {t for t, _ in exemplar_ids} == {t for t, _, _ in sent}
    finally:
        rotel.stop()
