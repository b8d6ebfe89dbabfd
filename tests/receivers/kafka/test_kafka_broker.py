"""The ``kafka`` receiver against a real Kafka-protocol broker (tansu), wired to the real window and pipeline."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Sequence

import pytest

from evald.config.loader import parse_config
from evald.exporters.memory import InMemoryExporter
from evald.model import ScoredCase
from evald.receivers.kafka import KafkaReceiver
from evald.service import EvaldService
from tests.receivers.kafka.support import (
    CORPUS,
    committed,
    corpus_records,
    create_topic,
    produce,
    scored_trace_ids,
    wait_committed,
)

pytestmark = pytest.mark.integration


class GatedExporter(InMemoryExporter):
    """Holds every export until ``gate`` is set (so nothing derived from a record is done before)."""

    def __init__(self) -> None:
        super().__init__("gated")
        self.gate = asyncio.Event()

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        await self.gate.wait()
        await super().export(batch)


def config_text(bootstrap: str, topic: str, group: str, encoding: str = "otlp_proto") -> str:
    return f"""
receivers:
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topic: {topic}, encoding: {encoding} }}
    group_id: {group}
    initial_offset: earliest
    session_timeout: 1500ms
    heartbeat_interval: 200ms
    commit_interval: 100ms
assembly: {{ settle: 200ms, decision_wait: 2s }}
metrics:
  - kind: error_free
    scope: all
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
"""


def service(bootstrap: str, topic: str, group: str, exporter: InMemoryExporter) -> EvaldService:
    config = parse_config(config_text(bootstrap, topic, group))
    return EvaldService(config, with_admin=False, configured_exporters=False, extra_exporters=[exporter])


def sample(svc: EvaldService, name: str, **labels: str) -> float:
    return svc.telemetry.registry.get_sample_value(name, labels) or 0.0


async def wait_until(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def names() -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    return f"otlp_spans_{suffix}", f"evald_{suffix}"


async def test_corpus_is_scored_and_offsets_are_committed_only_after_export(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 2)
    records = corpus_records()
    ends = await produce(kafka_broker, topic, list(records))
    exporter = GatedExporter()
    svc = service(kafka_broker, topic, group, exporter)
    await svc.start()
    try:
        await wait_until(lambda: sample(svc, "evald_kafka_records_total", receiver="kafka", topic=topic)
                         == len(records))
        await asyncio.sleep(1.0)  # traces settle and reach the (blocked) exporter; commits would run meanwhile
        before = await committed(kafka_broker, group, topic, 2)
        assert all(offset in (None, 0) for offset in before.values()), before  # nothing exported: nothing done
        exporter.gate.set()
        got = await wait_committed(kafka_broker, group, topic, 2, ends)
        assert got == {p: ends.get(p) for p in range(2)}
        scored = {c.trace_id for c in exporter.cases}
        assert scored == scored_trace_ids()
        identities = [(c.trace_id, c.case.span_id, c.case.scope) for c in exporter.cases]
        assert len(identities) == len(set(identities)), "every case is scored once"
        assert sample(svc, "evald_kafka_commits_total", receiver="kafka", outcome="success") >= 1
    finally:
        await svc.shutdown()


async def test_poison_records_are_counted_skipped_and_committed_past(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    (t1, v1), (t2, v2) = corpus_records()[:2]
    bad = [("x", b"\xff\xff\xff\xff not protobuf"), ("y", b'{"resourceSpans": []}')]  # garbage; wrong encoding
    ends = await produce(kafka_broker, topic, [(t1, v1), *bad, (t2, v2)])
    exporter = InMemoryExporter()
    svc = service(kafka_broker, topic, group, exporter)
    await svc.start()
    try:
        got = await wait_committed(kafka_broker, group, topic, 1, ends)
        assert got == {0: 4}
        assert {c.trace_id for c in exporter.cases} == {t1, t2}
        assert sample(svc, "evald_kafka_poison_records_total", receiver="kafka", topic=topic) == 2
    finally:
        await svc.shutdown()


async def test_backpressure_pauses_and_resumes(kafka_broker: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="evald.receivers.kafka")
    topic, group = names()
    await create_topic(kafka_broker, topic, 2)
    records = corpus_records()
    ends = await produce(kafka_broker, topic, list(records))
    exporter = InMemoryExporter()
    text = config_text(kafka_broker, topic, group).replace("decision_wait: 2s }", "decision_wait: 2s, num_traces: 1 }")
    svc = EvaldService(parse_config(text), with_admin=False, configured_exporters=False, extra_exporters=[exporter])
    await svc.start()
    try:
        got = await wait_committed(kafka_broker, group, topic, 2, ends, timeout=30)
        assert got == {p: ends.get(p) for p in range(2)}
        assert {c.trace_id for c in exporter.cases} == scored_trace_ids()
        receiver = svc.receivers[0]
        assert isinstance(receiver, KafkaReceiver)
        assert "paused 2 partitions: the assembly window is full" in caplog.text  # num_traces: 1 overflowed
        assert sample(svc, "evald_kafka_paused_partitions", receiver="kafka") == 0
        assert sample(svc, "evald_receiver_refused_spans_total") == 0
    finally:
        await svc.shutdown()


async def test_two_replicas_in_one_group_split_the_partitions(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 4)
    exporters = [InMemoryExporter("one"), InMemoryExporter("two")]
    services = [service(kafka_broker, topic, group, e) for e in exporters]
    receivers: list[KafkaReceiver] = []
    try:
        for svc in services:
            await svc.start()
            receiver = svc.receivers[0]
            assert isinstance(receiver, KafkaReceiver)
            receivers.append(receiver)
        # the second join revokes the first replica's partitions and hands out two each
        await wait_until(lambda: all(len(r.assignment) == 2 for r in receivers), timeout=20)
        assert receivers[0].assignment.isdisjoint(receivers[1].assignment)
        assert sample(services[0], "evald_kafka_rebalances_total", receiver="kafka", kind="revoked") >= 1
        placed: dict[str, int] = {}
        ends = await produce(kafka_broker, topic, list(corpus_records()), placed)
        got = await wait_committed(kafka_broker, group, topic, 4, ends)
        assert got == {p: ends.get(p) for p in range(4)}
        want = scored_trace_ids()
        for receiver, exporter in zip(receivers, exporters, strict=True):
            mine = {t for t, p in placed.items() if (topic, p) in receiver.assignment and t in want}
            await wait_until(lambda e=exporter, m=mine: {c.trace_id for c in e.cases} == m)  # type: ignore[misc]
        assert {c.trace_id for e in exporters for c in e.cases} == want
    finally:
        for svc in services:
            await svc.shutdown()


async def test_records_in_flight_when_a_replica_leaves_are_read_again(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    ends = await produce(kafka_broker, topic, list(corpus_records()))
    stuck = GatedExporter()  # the first replica never finishes anything
    first = service(kafka_broker, topic, group, stuck)
    await first.start()
    second: EvaldService | None = None
    try:
        await wait_until(lambda: sample(first, "evald_kafka_records_total", receiver="kafka", topic=topic) == 8)
        await first.receivers[0].shutdown(0.2)  # leaves the group: its partition is revoked with 8 in flight
        assert (await committed(kafka_broker, group, topic, 1)) == {0: 0}
        exporter = InMemoryExporter()
        second = service(kafka_broker, topic, group, exporter)
        await second.start()
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 8}
        assert {c.trace_id for c in exporter.cases} == scored_trace_ids()  # read again from offset 0
        stuck.gate.set()  # the first replica finishing late must not move the group's offsets
        await asyncio.sleep(0.5)
        assert (await committed(kafka_broker, group, topic, 1)) == {0: 8}
    finally:
        stuck.gate.set()
        await first.shutdown()
        if second is not None:
            await second.shutdown()


async def test_revocation_with_records_in_flight_commits_nothing_unfinished(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 2)
    placed: dict[str, int] = {}
    ends = await produce(kafka_broker, topic, list(corpus_records()), placed)
    stuck = GatedExporter()
    services = [service(kafka_broker, topic, group, stuck)]
    try:
        await services[0].start()
        first = services[0].receivers[0]
        assert isinstance(first, KafkaReceiver)
        await wait_until(lambda: sample(services[0], "evald_kafka_records_total", receiver="kafka", topic=topic) == 8)
        exporter = InMemoryExporter()
        services.append(service(kafka_broker, topic, group, exporter))
        await services[1].start()  # revokes both partitions from the first replica while all 8 are in flight
        second = services[1].receivers[0]
        assert isinstance(second, KafkaReceiver)
        await wait_until(lambda: len(first.assignment) == len(second.assignment) == 1, timeout=20)
        (mine,), (kept,) = second.assignment, first.assignment
        want = scored_trace_ids()
        await wait_until(lambda: {c.trace_id for c in exporter.cases} == {
            t for t, p in placed.items() if p == mine[1] and t in want})  # the new owner re-read its partition
        await asyncio.sleep(0.5)
        # the partition that came back to the stuck replica was re-read, but nothing of it is finished
        assert (await committed(kafka_broker, group, topic, 2))[kept[1]] in (None, 0)
        stuck.gate.set()
        got = await wait_committed(kafka_broker, group, topic, 2, ends)
        assert got == {p: ends.get(p) for p in range(2)}
        assert {c.trace_id for c in stuck.cases} | {c.trace_id for c in exporter.cases} == want
    finally:
        stuck.gate.set()
        for svc in services:
            await svc.shutdown()


async def test_otlp_json_records(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    path = CORPUS / "a_chat_correct.json"
    trace_id = json.loads(path.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    proto = corpus_records()[0][1]  # valid otlp_proto, but this topic is otlp_json: poison
    ends = await produce(kafka_broker, topic, [(trace_id, path.read_bytes()), ("p", proto)])
    exporter = InMemoryExporter()
    svc = EvaldService(parse_config(config_text(kafka_broker, topic, group, "otlp_json")), with_admin=False,
                       configured_exporters=False, extra_exporters=[exporter])
    await svc.start()
    try:
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 2}
        assert {c.trace_id for c in exporter.cases} == {trace_id}
        assert sample(svc, "evald_kafka_poison_records_total", receiver="kafka", topic=topic) == 1
    finally:
        await svc.shutdown()


async def test_a_topics_list_is_consumed_as_one_subscription(kafka_broker: str) -> None:
    first, group = names()
    second = f"{first}_b"
    for topic in (first, second):
        await create_topic(kafka_broker, topic, 1)
    records = corpus_records()
    ends_a = await produce(kafka_broker, first, list(records[:4]))
    ends_b = await produce(kafka_broker, second, list(records[4:]))
    exporter = InMemoryExporter()
    text = config_text(kafka_broker, first, group).replace(f"topic: {first},", f"topics: [{first}, {second}],")
    svc = EvaldService(parse_config(text), with_admin=False, configured_exporters=False, extra_exporters=[exporter])
    await svc.start()
    try:
        assert await wait_committed(kafka_broker, group, first, 1, ends_a) == {0: 4}
        assert await wait_committed(kafka_broker, group, second, 1, ends_b) == {0: len(records) - 4}
        await wait_until(lambda: {c.trace_id for c in exporter.cases} == scored_trace_ids())
        assert sample(svc, "evald_kafka_records_total", receiver="kafka", topic=second) == len(records) - 4
    finally:
        await svc.shutdown()
