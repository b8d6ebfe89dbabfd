"""``KafkaForwarder`` against a real Kafka-protocol broker (tansu): records per trace, acknowledgement, bounds."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.errors import QueueFullError
from evald.ingest.forwarder import IngestConfig, KafkaForwarder, producer_options
from evald.model import SignalBatch
from evald.receivers.convert import convert_logs, convert_traces
from evald.telemetry import Telemetry
from tests.ingest.support import ingest_config, read_topic, wait_until
from tests.receivers.kafka.broker import free_port
from tests.receivers.kafka.support import create_topic
from tests.receivers.support import logs_request, sample, trace_request

pytestmark = pytest.mark.integration

T1, T2, T3 = (bytes([i]) * 16 for i in (7, 8, 9))


def three_trace_batch() -> SignalBatch:
    spans = [s for t in (T1, T2, T3) for s in convert_traces(trace_request(2, trace_id=t)).records]
    return SignalBatch(spans=tuple(spans))


async def started(forwarder: KafkaForwarder) -> KafkaForwarder:
    await forwarder.start()
    await wait_until(lambda: forwarder.connected)
    return forwarder


async def test_each_trace_is_one_acknowledged_record_keyed_by_its_hex_id(kafka_broker: str) -> None:
    cfg = ingest_config(kafka_broker, traces={"topic": "fw_spans_a", "encoding": "otlp_proto"},
                        logs={"topic": "fw_logs_a"})
    await create_topic(kafka_broker, "fw_spans_a", 2)
    await create_topic(kafka_broker, "fw_logs_a", 1)
    telemetry = Telemetry()
    forwarder = await started(KafkaForwarder(cfg, telemetry))
    try:
        assert telemetry.health.components["ingest:kafka"] is True
        result = forwarder.consume(three_trace_batch())
        assert result.durable is not None and result.rejected_spans == 0
        assert forwarder.in_flight == 3  # one record per trace waits for the broker
        await asyncio.wait_for(result.durable, 10)
        logs = forwarder.consume(SignalBatch(logs=convert_logs(logs_request(2, trace_id=T2)).records))
        assert logs.durable is not None
        await asyncio.wait_for(logs.durable, 10)
        assert forwarder.in_flight == 0
    finally:
        await forwarder.shutdown(5)
    records = dict(await read_topic(kafka_broker, "fw_spans_a", 3))
    assert set(records) == {T1.hex(), T2.hex(), T3.hex()}
    for key, value in records.items():
        request = ExportTraceServiceRequest.FromString(value)
        assert {s.trace_id.hex() for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans} == {key}
        assert sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans) == 2
    (key, value), = await read_topic(kafka_broker, "fw_logs_a", 1)
    assert key == T2.hex()
    assert len(ExportLogsServiceRequest.FromString(value).resource_logs[0].scope_logs[0].log_records) == 2
    reg = telemetry.registry
    assert sample(reg, "evald_ingest_records_total", topic="fw_spans_a", outcome="acked") == 3
    assert sample(reg, "evald_ingest_records_total", topic="fw_logs_a", outcome="acked") == 1
    assert sample(reg, "evald_ingest_produce_seconds_count", topic="fw_spans_a") == 1
    assert sample(reg, "evald_ingest_in_flight") == 0


async def test_max_in_flight_refuses_with_queue_full_and_counts(kafka_broker: str) -> None:
    cfg = ingest_config(kafka_broker, max_in_flight=2)
    telemetry = Telemetry()
    forwarder = await started(KafkaForwarder(cfg, telemetry))
    try:
        with pytest.raises(QueueFullError, match="max_in_flight") as err:
            forwarder.consume(three_trace_batch())  # 3 records > 2
        assert err.value.retry_after == pytest.approx(0.2)
        assert forwarder.in_flight == 0
        topic = cfg.traces.topic
        assert sample(telemetry.registry, "evald_ingest_records_total", topic=topic, outcome="refused") == 3
    finally:
        await forwarder.shutdown(5)


async def test_a_trace_over_max_record_size_is_left_out_as_partial_success(kafka_broker: str) -> None:
    cfg = ingest_config(kafka_broker, max_record_size=600)
    forwarder = await started(KafkaForwarder(cfg, Telemetry()))
    try:
        small = convert_traces(trace_request(1, trace_id=T1)).records
        big = convert_traces(trace_request(1, trace_id=T2, attributes={"blob": "x" * 2000})).records
        result = forwarder.consume(SignalBatch(spans=small + big))
        assert result.rejected_spans == 1 and "max_record_size" in result.message
        assert result.durable is not None
        await asyncio.wait_for(result.durable, 10)
    finally:
        await forwarder.shutdown(5)
    assert [key for key, _ in await read_topic(kafka_broker, cfg.traces.topic, 1)] == [T1.hex()]


async def test_without_a_broker_consume_refuses_and_readiness_is_false() -> None:
    cfg = ingest_config(f"127.0.0.1:{free_port()}")  # nothing listens there
    telemetry = Telemetry()
    forwarder = KafkaForwarder(cfg, telemetry)
    await forwarder.start()
    try:
        with pytest.raises(QueueFullError, match="not connected"):
            forwarder.consume(three_trace_batch())
        assert telemetry.health.components["ingest:kafka"] is False
        assert sample(telemetry.registry, "evald_ingest_records_total", topic=cfg.traces.topic,
                      outcome="unavailable") == 3
    finally:
        await asyncio.wait_for(forwarder.shutdown(2), 5)


def test_producer_options_carry_acks_timeouts_and_the_receivers_auth_model() -> None:
    cfg = IngestConfig.model_validate({
        "brokers": ["k:9092"], "acks": 1, "linger": "20ms", "request_timeout": "3s", "compression": "gzip",
        "auth": {"sasl": {"mechanism": "SCRAM-SHA-512", "username": "u", "password": "p"}},
    })
    options = producer_options(cfg)
    assert options["bootstrap_servers"] == ["k:9092"] and options["acks"] == 1
    assert options["enable_idempotence"] is False  # tansu and some brokers do not support it
    assert (options["linger_ms"], options["request_timeout_ms"], options["compression_type"]) == (20, 3000, "gzip")
    assert options["security_protocol"] == "SASL_PLAINTEXT" and options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert "group_id" not in options


def test_ingest_config_rejects_one_topic_for_both_signals() -> None:
    with pytest.raises(ValueError, match="must differ"):
        IngestConfig.model_validate({"traces": {"topic": "t"}, "logs": {"topic": "t"}})
