"""The kafka exporter against a real broker (tansu): one JSON record per scored case, keyed by trace id."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from evald.config.loader import parse_config
from evald.exporters.kafka import KafkaExporter, KafkaExporterConfig
from evald.replay import replay
from evald.telemetry import Telemetry
from tests.receivers.kafka.broker import free_port
from tests.receivers.kafka.conftest import kafka_broker  # noqa: F401  (the tansu fixture)
from tests.receivers.kafka.support import create_topic

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"
CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: error_free, scope: all }
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
"""


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


async def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 20.0) -> list[tuple[str, dict]]:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False, group_id=None)
    await consumer.start()
    out: list[tuple[str, dict]] = []
    try:
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                out += [(r.key.decode(), json.loads(r.value)) for r in records]
    finally:
        await consumer.stop()
    return out


async def test_scored_cases_arrive_as_json_records_keyed_by_trace_id(kafka_broker: str) -> None:  # noqa: F811
    await create_topic(kafka_broker, "evald_scores", 3)
    result = await replay(sorted(CORPUS.glob("[a-f]_*.pb")), parse_config(CONFIG, environ={}))
    assert result.scored
    tm = Telemetry()
    exporter = KafkaExporter(KafkaExporterConfig(brokers=[kafka_broker]), tm, component_id="kafka/test")
    await exporter.start()
    await exporter.export(result.scored)
    await exporter.shutdown(15)
    records = await consume_all(kafka_broker, "evald_scores", len(result.scored))
    assert len(records) == len(result.scored)  # every case once
    expected = {(c.trace_id, c.case.scope, c.span_id): c.to_json_line() for c in result.scored}
    for key, line in records:
        assert key == line["trace_id"]
        assert json.loads(json.dumps(expected[(line["trace_id"], line["scope"], line["span_id"])],
                                     default=str)) == line
    assert sample(tm, "evald_exporter_sent_scores_total", exporter="kafka/test") == len(result.scored)


async def test_a_broker_that_is_down_loses_nothing_silently_and_shutdown_keeps_its_deadline() -> None:
    result = await replay([CORPUS / "a_chat_correct.pb"], parse_config(CONFIG, environ={}))
    tm = Telemetry()
    config = KafkaExporterConfig.model_validate({
        "brokers": [f"127.0.0.1:{free_port()}"], "timeout": "1s",
        "retry_on_failure": {"initial_interval": "100ms", "max_interval": "200ms"}})
    exporter = KafkaExporter(config, tm, component_id="kafka/down")
    await exporter.start()
    await exporter.export(result.scored)
    await asyncio.sleep(0.5)
    started = time.monotonic()
    await exporter.shutdown(2)
    assert time.monotonic() - started < 5
    dropped = sum(sample(tm, "evald_exporter_dropped_scores_total", exporter="kafka/down", reason=r)
                  for r in ("shutdown", "retries_exhausted"))
    assert dropped == len(result.scored)  # every record accounted for as a counted drop
    assert sample(tm, "evald_exporter_sent_scores_total", exporter="kafka/down") == 0


def test_oversize_records_are_dropped_and_counted() -> None:
    from evald.exporters.kafka import encode_records

    result = asyncio.run(replay([CORPUS / "a_chat_correct.pb"], parse_config(CONFIG, environ={})))
    sizes = sorted(len(value) for _, value in encode_records(result.scored))
    limit = sizes[(len(sizes) - 1) // 2]
    too_big = sum(size > limit for size in sizes)
    assert 0 < too_big < len(sizes)
    tm = Telemetry()
    exporter = KafkaExporter(KafkaExporterConfig(max_record_size=limit), tm, component_id="kafka/small")
    asyncio.run(exporter.export(result.scored))
    assert sample(tm, "evald_exporter_dropped_scores_total", exporter="kafka/small",
                  reason="permanent_error") == too_big
    assert sample(tm, "evald_exporter_queue_size", exporter="kafka/small") == len(sizes) - too_big  # the rest queued


async def test_records_queued_on_disk_while_the_broker_is_down_reach_it_after_a_restart(
        kafka_broker: str, tmp_path: Path) -> None:  # noqa: F811
    await create_topic(kafka_broker, "evald_scores_disk", 2)
    result = await replay(sorted(CORPUS.glob("[a-c]_*.pb")), parse_config(CONFIG, environ={}))
    storage = {"storage": {"directory": str(tmp_path / "queue")}}
    down = KafkaExporterConfig.model_validate({
        "brokers": [f"127.0.0.1:{free_port()}"], "topic": "evald_scores_disk", "timeout": "1s",
        "retry_on_failure": {"initial_interval": "100ms", "max_interval": "200ms", "max_elapsed_time": 0},
        "sending_queue": storage})
    tm = Telemetry()
    first = KafkaExporter(down, tm, component_id="kafka/disk")
    await first.start()
    await first.export(result.scored)  # returns once the records are fsync'ed to the queue file
    await first.shutdown(0.5)
    assert sum(sample(tm, "evald_exporter_dropped_scores_total", exporter="kafka/disk", reason=r)
               for r in ("shutdown", "retries_exhausted", "permanent_error")) == 0  # kept on disk, not dropped
    up = down.model_copy(update={"brokers": [kafka_broker]})
    second = KafkaExporter(up, Telemetry(), component_id="kafka/disk")
    await second.start()
    records = await consume_all(kafka_broker, "evald_scores_disk", len(result.scored))
    await second.shutdown(5)
    assert sorted((key, line["scope"], line["span_id"]) for key, line in records) == sorted(
        (c.trace_id, c.case.scope, c.span_id) for c in result.scored)  # every record once, keys kept
