"""Judge calls traced (telemetry.traces): the OTel SDK's OTLP span exporter (gRPC and HTTP) sends to a real rotel
collector, which forwards to a recording OTLP/gRPC trace sink. One span per judged evaluation, linked to the
evaluated span; one child span per attempt with model, tokens, cost and outcome; a cache hit without attempts;
a deliberate skip that is not an error; nothing at all when tracing is off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from evald.judges import tracing
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeSkipped
from evald.judges.prompting import VerdictField
from evald.judges.telemetry import judge_telemetry
from evald.judges.tracing import TracesConfig, install_tracing, shutdown_tracing
from evald.telemetry import Telemetry
from tests.exporters.otlp_sink import Rotel, attrs, eventually
from tests.integration.daemon import free_port
from tests.judges.fake_llm import Reply, fake_llm, judge_config

pytestmark = pytest.mark.integration
FIELDS = [VerdictField("score", 1, 5, "how good")]
PRICE = {"input": 1000.0, "output": 2000.0}  # USD per million tokens: 100 in + 10 out = 0.12 USD
CASE = ("ab" * 16, "cd" * 8, "trace")


class TraceSink(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self._server: grpc.aio.Server | None = None

    async def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method's name
        self.requests.append(request)
        return trace_service_pb2.ExportTraceServiceResponse()

    async def start(self) -> TraceSink:
        self._server = grpc.aio.server()
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self._server)
        self._server.add_insecure_port(f"127.0.0.1:{self.port}")
        await self._server.start()
        return self

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(grace=0.5)

    def spans(self) -> list[tuple[dict[str, Any], Span]]:
        return [(attrs(rs.resource.attributes), span) for request in self.requests for rs in request.resource_spans
                for ss in rs.scope_spans for span in ss.spans]


@pytest.fixture
async def collector(tmp_path: Path) -> AsyncIterator[tuple[TraceSink, Rotel]]:
    sink = await TraceSink().start()
    rotel = Rotel(tmp_path, sink.port).start()
    try:
        yield sink, rotel
    finally:
        rotel.stop()
        await sink.stop()


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
async def test_judge_calls_become_spans_linked_to_the_evaluated_trace(
    collector: tuple[TraceSink, Rotel], protocol: str
) -> None:
    sink, rotel = collector
    port = rotel.grpc_port if protocol == "grpc" else rotel.http_port
    install_tracing(TracesConfig(endpoint=f"http://127.0.0.1:{port}", protocol=protocol))  # type: ignore[arg-type]
    try:
        async with fake_llm() as llm:
            llm.then(Reply(status=500), Reply())  # a server error, retried, then a verdict
            config = judge_config(llm, price=PRICE, cache={"enabled": True, "ttl": "1h"},
                                  never_send={"service_names": ["secret-svc"]})
            judge = Judge("default", config, judge_telemetry(Telemetry().registry))
            try:
                data = [("output", "Paris.")]
                verdict = await judge.evaluate("rate it", data, FIELDS, metric="geval@1", evaluated=CASE)
                assert verdict.values["score"] == 5
                await judge.evaluate("rate it", data, FIELDS, metric="geval@1", evaluated=CASE)  # a cache hit
                with pytest.raises(JudgeSkipped):
                    await judge.evaluate("rate it", data, FIELDS, metric="geval@1", service="secret-svc",
                                         evaluated=CASE)
            finally:
                await judge.aclose()
    finally:
        shutdown_tracing(5.0)
    assert await eventually(lambda: len(sink.spans()) >= 5, 10.0), f"spans: {sink.spans()}"
    spans = sink.spans()
    assert len(spans) == 5
    assert all(resource["service.name"] == "evald" for resource, _ in spans)
    evaluations = [s for _, s in spans if s.name == "evald.judge geval"]
    attempts = [s for _, s in spans if s.name == "chat gpt-4o-mini"]
    assert len(evaluations) == 3 and len(attempts) == 2
    by_outcome = {attrs(s.attributes)["evald.judge.outcome"]: s for s in evaluations}
    assert set(by_outcome) == {"ok", "never_send"}
    called, hit = sorted((s for s in evaluations if attrs(s.attributes)["evald.judge.outcome"] == "ok"),
                         key=lambda s: s.start_time_unix_nano)
    for span in evaluations:  # each linked to the evaluated span, in a trace of its own
        assert [(link.trace_id.hex(), link.span_id.hex()) for link in span.links] == [CASE[:2]]
        a = attrs(span.attributes)
        assert (a["evald.judge.name"], a["evald.metric"], a["gen_ai.request.model"]) == ("default", "geval@1",
                                                                                        "gpt-4o-mini")
        assert a["evald.case.trace_id"] == CASE[0] and span.trace_id.hex() != CASE[0]
    assert attrs(called.attributes)["evald.judge.cache_hit"] is False
    assert attrs(hit.attributes)["evald.judge.cache_hit"] is True
    assert by_outcome["never_send"].status.code != 2  # a deliberate skip is not an error (STATUS_CODE_ERROR = 2)
    first, second = sorted(attempts, key=lambda s: attrs(s.attributes)["evald.judge.attempt"])
    for attempt in (first, second):  # children of the evaluation that called the provider
        assert attempt.trace_id == called.trace_id and attempt.parent_span_id == called.span_id
        assert attempt.kind == Span.SPAN_KIND_CLIENT
        assert attrs(attempt.attributes)["gen_ai.operation.name"] == "chat"
        assert attrs(attempt.attributes)["gen_ai.provider.name"] == "openai"
    assert attrs(first.attributes)["evald.judge.outcome"] == "server_error" and first.status.code == 2
    ok = attrs(second.attributes)
    assert ok["evald.judge.outcome"] == "ok" and second.status.code != 2
    assert (ok["gen_ai.usage.input_tokens"], ok["gen_ai.usage.output_tokens"]) == (100, 10)
    assert ok["evald.judge.cost_usd"] == pytest.approx((100 * 1000.0 + 10 * 2000.0) / 1e6)
    assert not any(s.trace_id == hit.trace_id for s in attempts)  # the cache hit sent nothing


async def test_off_by_default_nothing_is_traced() -> None:
    assert tracing._tracer is None
    install_tracing(None)
    assert tracing._tracer is None

    async def send() -> Any:
        return None

    assert tracing.traced_send(send, "m", "openai", lambda i, o: 0.0) is send  # the judge path is unchanged
    async with tracing.judged_evaluation("j", "m", "openai", "geval@1", CASE) as span:
        assert span is None
