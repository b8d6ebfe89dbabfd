"""Dead-letter copies of poison records (evald/receivers/kafka_dlq.py) against real tansu brokers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evald.config.loader import parse_config
from evald.exporters.memory import InMemoryExporter
from evald.service import EvaldService
from tests.receivers.kafka.broker import Tansu, tansu_binary
from tests.receivers.kafka.support import committed, corpus_records, create_topic, produce, read_topic, wait_committed
from tests.receivers.kafka.test_kafka_broker import config_text, names, sample, wait_until

pytestmark = pytest.mark.integration

POISON = b"\xff\xff\xff\xff not protobuf"


def dlq_service(bootstrap: str, topic: str, group: str, exporter: InMemoryExporter, dead_letter: str) -> EvaldService:
    text = config_text(bootstrap, topic, group).replace(
        "    commit_interval: 100ms\n", f"    commit_interval: 100ms\n    dead_letter: {dead_letter}\n")
    return EvaldService(parse_config(text), with_admin=False, configured_exporters=False, extra_exporters=[exporter])


def dead_letter(svc: EvaldService, outcome: str) -> float:
    return sample(svc, "evald_kafka_dead_letter_total", receiver="kafka", outcome=outcome)


async def test_poison_record_is_copied_with_its_origin_before_it_is_skipped(kafka_broker: str) -> None:
    topic, group = names()
    dlq = f"{topic}_dlq"
    await create_topic(kafka_broker, topic, 1)
    await create_topic(kafka_broker, dlq, 1)
    (t1, v1), (t2, v2) = corpus_records()[:2]
    ends = await produce(kafka_broker, topic, [(t1, v1), ("bad-key", POISON), (t2, v2)])
    exporter = InMemoryExporter()
    svc = dlq_service(kafka_broker, topic, group, exporter, f"{{topic: {dlq}}}")
    await svc.start()
    try:
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 3}
        assert {c.trace_id for c in exporter.cases} == {t1, t2}
        assert dead_letter(svc, "copied") == 1 and dead_letter(svc, "failed") == 0
        assert sample(svc, "evald_kafka_poison_records_total", receiver="kafka", topic=topic) == 1
    finally:
        await svc.shutdown()
    (copy,) = await read_topic(kafka_broker, dlq, 1)
    assert (copy.key, copy.value) == (b"bad-key", POISON)
    headers = dict(copy.headers)
    assert 0 < len(headers["evald.error"]) <= 1000
    assert (headers["evald.source.topic"], headers["evald.source.partition"], headers["evald.source.offset"]) == (
        topic.encode(), b"0", b"1")


async def test_dead_letter_outage_holds_the_offset_until_the_copy_succeeds(kafka_broker: str, tmp_path: Path) -> None:
    binary = tansu_binary()
    assert binary is not None
    dlq_broker = Tansu(binary, tmp_path / "dlq.log")  # port reserved, broker not started yet: the copy fails
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    (t1, v1), (t2, v2) = corpus_records()[:2]
    ends = await produce(kafka_broker, topic, [(t1, v1), ("k", POISON), (t2, v2)])
    exporter = InMemoryExporter()
    config = f'{{topic: dlq, brokers: ["{dlq_broker.bootstrap}"], backoff: 100ms, timeout: 1s, max_attempts: 1000}}'
    svc = dlq_service(kafka_broker, topic, group, exporter, config)
    await svc.start()
    try:
        # the records after the poison one are consumed and scored ...
        await wait_until(lambda: {c.trace_id for c in exporter.cases} == {t1, t2} and dead_letter(svc, "failed") >= 3)
        # ... but the committed offset stays on the poison record while its copy fails
        assert await wait_committed(kafka_broker, group, topic, 1, {0: 1}) == {0: 1}
        assert (await committed(kafka_broker, group, topic, 1)) == {0: 1}
        dlq_broker.start()
        await create_topic(dlq_broker.bootstrap, "dlq", 1)
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 3}
        assert dead_letter(svc, "copied") == 1 and dead_letter(svc, "gave_up") == 0
        (copy,) = await read_topic(dlq_broker.bootstrap, "dlq", 1)
        assert copy.value == POISON and dict(copy.headers)["evald.source.offset"] == b"1"
    finally:
        await svc.shutdown()
        dlq_broker.stop()


async def test_after_max_attempts_the_poison_record_is_given_up(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    (t1, v1), (t2, v2) = corpus_records()[:2]
    ends = await produce(kafka_broker, topic, [(t1, v1), ("k", POISON), (t2, v2)])
    exporter = InMemoryExporter()
    config = '{topic: dlq, brokers: ["127.0.0.1:1"], backoff: 100ms, timeout: 1s, max_attempts: 3}'
    svc = dlq_service(kafka_broker, topic, group, exporter, config)
    await svc.start()
    try:
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 3}
        assert (dead_letter(svc, "failed"), dead_letter(svc, "gave_up"), dead_letter(svc, "copied")) == (3, 1, 0)
        assert {c.trace_id for c in exporter.cases} == {t1, t2}
    finally:
        await svc.shutdown()


async def test_a_copy_unfinished_at_shutdown_is_made_by_the_next_consumer(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    await create_topic(kafka_broker, f"{topic}_dlq", 1)
    (t1, v1), (t2, v2) = corpus_records()[:2]
    ends = await produce(kafka_broker, topic, [(t1, v1), ("k", POISON), (t2, v2)])
    down = '{topic: dlq, brokers: ["127.0.0.1:1"], backoff: 100ms, timeout: 1s, max_attempts: 1000}'
    first = dlq_service(kafka_broker, topic, group, InMemoryExporter(), down)
    await first.start()
    try:
        await wait_until(lambda: dead_letter(first, "failed") >= 2)
        assert await wait_committed(kafka_broker, group, topic, 1, {0: 1}) == {0: 1}
    finally:
        await first.shutdown()  # the copy is still failing: cancelled, the poison record stays uncommitted
    assert (await committed(kafka_broker, group, topic, 1)) == {0: 1}
    second = dlq_service(kafka_broker, topic, group, InMemoryExporter(), f"{{topic: {topic}_dlq}}")
    await second.start()
    try:
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 3}
        assert dead_letter(second, "copied") == 1
    finally:
        await second.shutdown()
    (copy,) = await read_topic(kafka_broker, f"{topic}_dlq", 1)
    assert copy.value == POISON and dict(copy.headers)["evald.source.offset"] == b"1"
