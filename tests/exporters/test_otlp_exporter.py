"""The otlp exporter against a real collector: evald -> rotel (OTLP gRPC / HTTP) -> a recording OTLP sink.

Checks metric names, attributes, bucket boundaries and exemplars, and that every ``gen_ai.evaluation.result``
record carries the trace/span id of the span it judged. Fault tests talk to the sink directly (stalled) or to a
port nobody listens on (collector down).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.exporters.acks import export_ack
from evald.exporters.otlp import OTLPExporter, OTLPExporterConfig
from evald.exporters.routing import MetricInfo
from evald.exporters.sending import DROP_REASONS
from evald.model import Delivery, ScoredCase
from evald.telemetry import Telemetry
from tests.exporters.otlp_sink import OTLPSink, Rotel, attrs, eventually
from tests.integration.daemon import free_port

pytestmark = pytest.mark.integration

T1, S1 = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
T2, S2 = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
BOUNDS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def make(endpoint: str, **cfg: Any) -> tuple[OTLPExporter, Telemetry]:
    telemetry = Telemetry()
    config = OTLPExporterConfig.model_validate(
        {"endpoint": endpoint, "export_interval": "60s", "timeout": "3s",
         "retry_on_failure": {"initial_interval": "100ms", "max_interval": "500ms"}, **cfg}
    )
    return OTLPExporter(config, telemetry, component_id="otlp/test"), telemetry


def llm_case(trace_id: str = T1, span_id: str = S1, service: str = "geo-app") -> EvalCase:
    return EvalCase(
        input="What is the capital of France?", output="Paris", trace_id=trace_id, span_id=span_id,
        scope="llm_call", service_name=service, model="gpt-4o-mini-2024-07-18", request_model="gpt-4o-mini",
        metadata={"response_id": "chatcmpl-123", "agent_name": "geo-agent"},
    )


def batch() -> list[ScoredCase]:
    first = ScoredCase(
        case=llm_case(),
        scores=(
            Score(name="contains", value=1.0, threshold=1.0, reason="found 'Paris'", dimension=Dimension.CORRECTNESS),
            Score(name="answer_relevance", value=0.35, threshold=0.7, reason="drifts off topic",
                  dimension=Dimension.CORRECTNESS),
        ),
        metric_dimensions={"contains": "correctness", "answer_relevance": "correctness"},
    )
    second = ScoredCase(
        case=EvalCase(trace_id=T2, span_id=S2, scope="trace", service_name="geo-app"),
        scores=(Score(name="error_free", value=1.0, threshold=1.0, dimension=Dimension.PERFORMANCE),),
        skipped=(("json_valid", "not_applicable"),),
        errors=(("house_toxicity", "timed out after 30s"),),
        metric_dimensions={"error_free": "performance", "json_valid": "correctness", "house_toxicity": "safety"},
    )
    return [first, second]


def dropped(telemetry: Telemetry, reason: str) -> float:
    value = telemetry.registry.get_sample_value(
        "evald_exporter_dropped_scores_total", {"exporter": "otlp/test", "reason": reason}
    )
    return value or 0.0


def events(sink: OTLPSink) -> list[tuple[dict[str, Any], Any]]:
    return [(res, r) for res, r in sink.log_records() if r.event_name == "gen_ai.evaluation.result"]


def distinct_names(sink: OTLPSink) -> set[str]:
    return {attrs(r.attributes)["gen_ai.evaluation.name"] for _, r in events(sink)}


async def test_scores_reach_the_collector_as_metrics_and_linked_events(sink: OTLPSink, collector: Rotel) -> None:
    exporter, telemetry = make(f"http://127.0.0.1:{collector.grpc_port}")
    # the service hands over the configured metrics' facts; a name it does not know falls back to the registry
    exporter.set_metric_info({"answer_relevance": MetricInfo(name="answer_relevance", kind="geval", version="3")})
    await exporter.start()
    await exporter.export(batch())
    started = time.monotonic()
    await exporter.shutdown(5.0)
    assert time.monotonic() - started < 5.5
    await sink.wait_for(lambda: len(events(sink)) >= 4 and bool(sink.latest_points("evald.evaluation.count")))

    # --- events: one per score and one per errored evaluation, each linked to the span it judged -------------
    got = events(sink)
    assert len(got) == 4
    by_name = {attrs(r.attributes)["gen_ai.evaluation.name"]: r for _, r in got}
    assert set(by_name) == {"contains", "answer_relevance", "error_free", "house_toxicity"}
    for name, record in by_name.items():
        expected = (T1, S1) if name in ("contains", "answer_relevance") else (T2, S2)
        assert (record.trace_id.hex(), record.span_id.hex()) == expected, name
        assert record.flags & 0x01 == 1  # sampled
        assert record.time_unix_nano > 0
    resource = got[0][0]
    assert resource["service.name"] == "evald"
    assert resource["service.instance.id"]

    relevance = attrs(by_name["answer_relevance"].attributes)
    assert relevance == {
        "gen_ai.evaluation.name": "answer_relevance",
        "gen_ai.evaluation.score.value": 0.35,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": "drifts off topic",
        "gen_ai.response.id": "chatcmpl-123",
        "evald.metric.threshold": 0.7,
        "evald.metric.dimension": "correctness",
        "evald.metric.version": "3",
        "evald.case.scope": "llm_call",
    }
    assert attrs(by_name["contains"].attributes)["gen_ai.evaluation.score.label"] == "pass"
    assert attrs(by_name["contains"].attributes)["evald.metric.version"] == "1"  # built-in kind, from its class
    assert "evald.metric.version" not in attrs(by_name["house_toxicity"].attributes)  # neither configured nor a kind
    error = attrs(by_name["house_toxicity"].attributes)
    assert error["error.type"] == "timeout"
    assert error["gen_ai.evaluation.explanation"] == "timed out after 30s"
    assert error["evald.metric.dimension"] == "safety"
    assert "gen_ai.evaluation.score.value" not in error

    # --- histogram: name, unit, bucket boundaries, attributes, exemplars -----------------------------------------
    (res, metric), *_ = sink.metrics("evald.evaluation.score")
    assert res["service.name"] == "evald"
    assert metric.unit == "1"
    points = sink.latest_points("evald.evaluation.score")
    by_attrs = {(a := attrs(p.attributes))["gen_ai.evaluation.name"]: (a, p) for p in points}
    assert set(by_attrs) == {"contains", "answer_relevance", "error_free"}
    a, point = by_attrs["answer_relevance"]
    assert a == {
        "gen_ai.evaluation.name": "answer_relevance", "evald.metric.dimension": "correctness",
        "evald.case.scope": "llm_call", "service.name": "geo-app", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.agent.name": "geo-agent", "evald.passed": False,
    }
    assert list(point.explicit_bounds) == BOUNDS
    assert point.count == 1 and point.sum == pytest.approx(0.35)
    assert list(point.bucket_counts)[3] == 1  # 0.3 < 0.35 <= 0.4
    exemplars = sink.exemplars("evald.evaluation.score", **{"gen_ai.evaluation.name": "answer_relevance"})
    assert [(e.trace_id.hex(), e.span_id.hex()) for e in exemplars] == [(T1, S1)]
    assert exemplars[0].as_double == pytest.approx(0.35)
    a, point = by_attrs["error_free"]
    assert a["evald.case.scope"] == "trace" and "gen_ai.agent.name" not in a and "gen_ai.request.model" not in a
    exemplars = sink.exemplars("evald.evaluation.score", **{"gen_ai.evaluation.name": "error_free"})
    assert [(e.trace_id.hex(), e.span_id.hex()) for e in exemplars] == [(T2, S2)]
    # counter points carry exemplars too
    exemplars = sink.exemplars("evald.evaluation.count", **{"gen_ai.evaluation.name": "house_toxicity"})
    assert {(e.trace_id.hex(), e.span_id.hex()) for e in exemplars} == {(T2, S2)}

    # --- counter: every outcome, including skipped and error ----------------------------------------------------
    (_, count_metric), *_ = sink.metrics("evald.evaluation.count")
    assert count_metric.sum.is_monotonic
    outcomes = {
        ((a := attrs(p.attributes))["gen_ai.evaluation.name"], a["evald.outcome"]): p.as_int
        for p in sink.latest_points("evald.evaluation.count")
    }
    assert outcomes == {
        ("contains", "pass"): 1, ("answer_relevance", "fail"): 1, ("error_free", "pass"): 1,
        ("json_valid", "skipped"): 1, ("house_toxicity", "error"): 1,
    }
    assert sum(dropped(telemetry, r) for r in (*DROP_REASONS, "error", "not_started")) == 0
    registry = telemetry.registry
    assert registry.get_sample_value("evald_exporter_sent_scores_total", {"exporter": "otlp/test"}) == 4
    assert registry.get_sample_value("evald_exporter_queue_capacity", {"exporter": "otlp/test"}) == 1000
    assert registry.get_sample_value("evald_exporter_queue_size", {"exporter": "otlp/test"}) == 0


async def test_http_protobuf_through_the_collector(sink: OTLPSink, collector: Rotel) -> None:
    exporter, telemetry = make(f"http://127.0.0.1:{collector.http_port}", protocol="http/protobuf")
    await exporter.start()
    await exporter.export(batch()[:1])
    await exporter.shutdown(5.0)
    await sink.wait_for(lambda: len(events(sink)) >= 2 and bool(sink.latest_points("evald.evaluation.score")))
    assert {(r.trace_id.hex(), r.span_id.hex()) for _, r in events(sink)} == {(T1, S1)}
    assert {attrs(p.attributes)["gen_ai.evaluation.name"] for p in sink.latest_points("evald.evaluation.score")} == {
        "contains", "answer_relevance"}
    assert sum(dropped(telemetry, r) for r in DROP_REASONS) == 0


async def test_collector_down_nothing_crashes_and_shutdown_keeps_its_deadline() -> None:
    exporter, telemetry = make(f"127.0.0.1:{free_port()}", tls={"insecure": True}, timeout="5s")
    await exporter.start()
    await exporter.export(batch())  # returns at once although nobody listens
    await exporter.export(batch())
    started = time.monotonic()
    await exporter.shutdown(1.5)
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed
    # 4 events per batch; each is counted once, as not delivered by the deadline
    assert dropped(telemetry, "shutdown") == 8
    assert dropped(telemetry, "retries_exhausted") == 0
    await exporter.export(batch())  # after shutdown: counted, not raised
    assert dropped(telemetry, "shutdown") == 12
    await exporter.shutdown(1.0)  # idempotent


async def test_a_stalled_collector_fills_the_queue_and_drops_are_counted(sink: OTLPSink) -> None:
    exporter, telemetry = make(f"http://127.0.0.1:{sink.port}", max_export_batch_size=1, metrics=False,
                               timeout="10s",
                               sending_queue={"queue_size": 4, "num_consumers": 1, "block_on_overflow": False})
    sink.open.clear()  # every Export now waits: the consumer is stuck on its first request
    await exporter.start()
    assert exporter.queue is not None and not exporter.waits_for_room
    case = batch()[0]  # 2 scores -> 2 events
    await exporter.export([case])
    await sink.wait_for(lambda: exporter.queue is not None and exporter.queue.pending == 2
                        and telemetry.registry.get_sample_value(
                            "evald_exporter_queue_size", {"exporter": "otlp/test"}) == 1, timeout=5)
    for _ in range(4):
        await exporter.export([case])  # 8 more events; at most 4 can wait
    # one event is in flight (taken by the consumer), 4 wait, the other 5 were refused and counted
    assert exporter.queue.pending == 5
    assert telemetry.registry.get_sample_value("evald_exporter_queue_size", {"exporter": "otlp/test"}) == 4
    assert dropped(telemetry, "queue_full") == 5
    sink.open.set()
    await exporter.shutdown(8.0)
    # every event was either delivered once or counted as dropped; none twice
    assert len(events(sink)) == 5
    assert dropped(telemetry, "queue_full") == 5
    assert dropped(telemetry, "retries_exhausted") == dropped(telemetry, "shutdown") == 0


async def test_a_collector_outage_loses_nothing_and_holds_the_acknowledgement(tmp_path: Path, sink: OTLPSink) -> None:
    rotel = Rotel(tmp_path, sink.port).start()
    exporter, telemetry = make(f"http://127.0.0.1:{rotel.grpc_port}", metrics=False, timeout="1s",
                               max_export_batch_size=10)
    acked: list[bool] = []
    try:
        await exporter.start()
        for i in range(5):  # 20 events delivered before the outage
            await exporter.export(numbered(i))
        await sink.wait_for(lambda: len(events(sink)) == 20, timeout=10)
        rotel.stop()
        delivery = Delivery(lambda: acked.append(True))
        token = export_ack.set(delivery)
        try:
            for i in range(5, 55):  # 200 events while the collector is down
                await exporter.export(numbered(i))
        finally:
            export_ack.reset(token)
        delivery.seal()
        await asyncio.sleep(5.0)  # a 5 s outage
        assert not acked  # nothing delivered yet: a Kafka source would not have committed
        rotel.start()  # the same ports
        # distinct events: a batch sent twice (at-least-once, below) must not end the wait before the last one arrives
        # (the collector is stopped right after, which would cut off a batch it has taken but not yet forwarded)
        await sink.wait_for(lambda: len(distinct_names(sink)) >= 220, timeout=20)
        assert await eventually(lambda: bool(acked), 5.0)
        await exporter.shutdown(5.0)
    finally:
        rotel.stop()
    names = sorted(attrs(r.attributes)["gen_ai.evaluation.name"] for _, r in events(sink))
    assert len(set(names)) == 220  # every event arrived: nothing lost
    # at-least-once: a batch the collector took while its answer was cut off by the stop (or by the 1 s attempt
    # timeout on a loaded host) is sent again, so a few batches of 10 may arrive twice; evald counts each event once
    assert len(names) - 220 <= 50
    assert telemetry.registry.get_sample_value("evald_exporter_sent_scores_total", {"exporter": "otlp/test"}) == 220
    assert sum(dropped(telemetry, r) for r in DROP_REASONS) == 0
    assert (telemetry.registry.get_sample_value(
        "evald_exporter_retries_total", {"exporter": "otlp/test", "reason": "network"}) or 0) > 0


async def test_events_queued_on_disk_while_the_collector_is_down_arrive_after_a_restart(
        tmp_path: Path, sink: OTLPSink, collector: Rotel) -> None:
    storage = {"queue_size": 1000, "storage": {"directory": str(tmp_path / "queue")}}
    down, telemetry = make(f"http://127.0.0.1:{free_port()}", metrics=False, timeout="1s", sending_queue=storage)
    await down.start()
    for i in range(10):
        await down.export(numbered(i))  # 40 events, fsync'ed to the queue file
    await down.shutdown(0.5)
    assert sum(dropped(telemetry, r) for r in DROP_REASONS) == 0  # kept on disk, not dropped
    up, telemetry = make(f"http://127.0.0.1:{collector.grpc_port}", metrics=False, timeout="1s",
                         sending_queue=storage)
    await up.start()  # sends what the file holds
    await sink.wait_for(lambda: len(events(sink)) >= 40, timeout=10)
    await up.shutdown(5.0)
    names = sorted(attrs(r.attributes)["gen_ai.evaluation.name"] for _, r in events(sink))
    assert names == sorted(f"m{i:03d}-{k}" for i in range(10) for k in range(4))
    assert {(r.trace_id.hex(), r.span_id.hex()) for _, r in events(sink)} == {(T1, S1)}


def numbered(i: int) -> list[ScoredCase]:
    """One case with 4 scores named ``m<i>-<k>`` (so every event is unique)."""
    return [ScoredCase(case=llm_case(), scores=tuple(Score(name=f"m{i:03d}-{k}", value=0.5, threshold=0.5)
                                                     for k in range(4)))]


async def test_attribute_sets_beyond_the_cap_fold_into_overflow(sink: OTLPSink) -> None:
    exporter, telemetry = make(f"http://127.0.0.1:{sink.port}", max_attribute_sets=2, events=False)
    await exporter.start()
    score = Score(name="contains", value=1.0, threshold=1.0)
    await exporter.export([
        ScoredCase(case=llm_case(service=f"app-{i}"), scores=(score,)) for i in range(5)
    ])
    await exporter.shutdown(5.0)
    await sink.wait_for(lambda: bool(sink.latest_points("evald.evaluation.count")))
    services = sorted(attrs(p.attributes)["service.name"] for p in sink.latest_points("evald.evaluation.count"))
    assert services == ["__overflow__", "app-0", "app-1"]
    overflow = [p for p in sink.latest_points("evald.evaluation.count")
                if attrs(p.attributes)["service.name"] == "__overflow__"]
    assert overflow[0].as_int == 3
    assert attrs(overflow[0].attributes)["gen_ai.agent.name"] == "__overflow__"
    assert telemetry.registry.get_sample_value(
        "evald_exporter_attribute_overflow_total", {"exporter": "otlp/test"}) == 3
