"""Consumer lag and assigned partitions (evald/receivers/kafka_lag.py): against tansu, and the paused path alone."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Gauge

from evald.exporters.memory import InMemoryExporter
from evald.receivers.kafka import KafkaReceiver
from evald.receivers.kafka_lag import ConsumerLag
from evald.receivers.kafka_offsets import PartitionOffsets
from evald.service import EvaldService
from tests.receivers.kafka.support import corpus_records, create_topic, produce, wait_committed
from tests.receivers.kafka.test_kafka_broker import GatedExporter, names, sample, service, wait_until

LAG = "evald_kafka_consumer_lag"


async def commit_for_group(bootstrap: str, group: str, topic: str, offset: int) -> None:
    """Commit ``offset`` of partition 0 for ``group`` without joining it (as an earlier replica would have)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.commit({tp: offset})
    finally:
        await consumer.stop()


def lag(svc: EvaldService, topic: str, partition: int) -> float | None:
    return svc.telemetry.registry.get_sample_value(LAG, {"receiver": "kafka", "topic": topic,
                                                         "partition": str(partition)})


@pytest.mark.integration
async def test_lag_is_the_high_watermark_minus_the_committed_offset(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 1)
    await produce(kafka_broker, topic, list(corpus_records()))  # offsets 0..7
    await commit_for_group(kafka_broker, group, topic, 3)  # the group already finished 0..2
    exporter = GatedExporter()  # nothing read by this replica is finished until the gate opens
    svc = service(kafka_broker, topic, group, exporter)
    await svc.start()
    try:
        await wait_until(lambda: sample(svc, "evald_kafka_records_total", receiver="kafka", topic=topic) == 5)
        await wait_until(lambda: lag(svc, topic, 0) == 5)  # 8 - 3: read but not evaluated still counts
        assert sample(svc, "evald_kafka_assigned_partitions", receiver="kafka") == 1
        ends = await produce(kafka_broker, topic, [("p", b"\xff poison"), ("q", b"\xff poison")])
        await wait_until(lambda: lag(svc, topic, 0) == 7)  # done poison records cannot pass the gated ones
        exporter.gate.set()
        assert await wait_committed(kafka_broker, group, topic, 1, ends) == {0: 10}
        await wait_until(lambda: lag(svc, topic, 0) == 0)
    finally:
        exporter.gate.set()
        await svc.shutdown()
    assert lag(svc, topic, 0) is None  # series removed with the assignment
    assert sample(svc, "evald_kafka_assigned_partitions", receiver="kafka") == 0


@pytest.mark.integration
async def test_each_replica_reports_only_the_partitions_it_owns(kafka_broker: str) -> None:
    topic, group = names()
    await create_topic(kafka_broker, topic, 2)
    await produce(kafka_broker, topic, list(corpus_records()))
    services = [service(kafka_broker, topic, group, InMemoryExporter(f"e{i}")) for i in range(2)]
    try:
        await services[0].start()
        await wait_until(lambda: lag(services[0], topic, 0) == 0 and lag(services[0], topic, 1) == 0)
        await services[1].start()
        receivers = [svc.receivers[0] for svc in services]
        assert all(isinstance(r, KafkaReceiver) for r in receivers)

        def reported(svc: EvaldService) -> set[int]:
            return {p for p in (0, 1) if lag(svc, topic, p) is not None}

        def split() -> bool:
            owned = [{p for _, p in r.assignment} for r in receivers]  # type: ignore[attr-defined]
            return all(len(o) == 1 and reported(s) == o for s, o in zip(services, owned, strict=True))

        await wait_until(split, timeout=20)  # the revoked partition's series left the first replica
        assert reported(services[0]) | reported(services[1]) == {0, 1}
        assert [sample(s, "evald_kafka_assigned_partitions", receiver="kafka") for s in services] == [1, 1]
    finally:
        for svc in services:
            await svc.shutdown()


class FakeConsumer:
    """``highwater`` from the last fetch (stale while paused) and ``end_offsets`` (a ListOffsets request)."""

    def __init__(self, highwater: dict[Any, int], end: dict[Any, int] | None) -> None:
        self._highwater = highwater
        self._end = end
        self.asked: list[list[Any]] = []

    def highwater(self, tp: Any) -> int | None:
        return self._highwater.get(tp)

    async def end_offsets(self, tps: list[Any]) -> dict[Any, int]:
        self.asked.append(list(tps))
        if self._end is None:
            raise ConnectionError("broker gone")
        return {tp: self._end[tp] for tp in tps}

    async def position(self, tp: Any) -> int:
        return 0


async def test_paused_partitions_ask_the_broker_and_fall_back_to_the_last_high_watermark() -> None:
    from aiokafka import TopicPartition

    registry = CollectorRegistry()
    gauge = Gauge("lag", "", ["receiver", "topic", "partition"], registry=registry)
    tracker = ConsumerLag("kafka", gauge, Gauge("assigned", "", ["receiver"], registry=registry), 1.0)
    tp = TopicPartition("t", 0)
    offsets = PartitionOffsets()
    offsets.start(4)
    offsets.committed = 2

    def value() -> float | None:
        return registry.get_sample_value("lag", {"receiver": "kafka", "topic": "t", "partition": "0"})

    fresh = FakeConsumer({tp: 10}, {tp: 50})
    await tracker.refresh(fresh, lambda: {tp: offsets}, paused=False)
    assert value() == 8 and fresh.asked == []  # the fetch response's high watermark, no extra request
    await tracker.refresh(fresh, lambda: {tp: offsets}, paused=True)
    assert value() == 48 and fresh.asked == [[tp]]  # paused: not fetched, so asked
    await tracker.refresh(FakeConsumer({tp: 10}, None), lambda: {tp: offsets}, paused=True)
    assert value() == 8  # the request failed: the last known high watermark
    tracker.assigned(0, [tp])
    assert value() is None
