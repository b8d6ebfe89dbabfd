"""Producing the shared corpus as the Collector's Kafka exporter does, and reading committed offsets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

CORPUS = Path(__file__).resolve().parents[2] / "testdata" / "corpus" / "otel-openai-v2.span_only"

Offsets = dict[int, int]  # partition -> next offset


def corpus_records() -> list[tuple[str, bytes]]:
    """(trace id hex, serialized ExportTraceServiceRequest) per corpus file: ``partition_traces_by_id`` keys."""
    out = []
    for path in sorted(CORPUS.glob("*.pb")):
        body = path.read_bytes()
        request = ExportTraceServiceRequest.FromString(body)
        trace_id = request.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
        out.append((trace_id, body))
    return out


def scored_trace_ids() -> set[str]:
    """Trace ids of the corpus that yield cases (the embeddings call has no chat output to score)."""
    skip = {"g_embeddings.pb"}
    return {trace_id for path, (trace_id, _) in zip(sorted(CORPUS.glob("*.pb")), corpus_records(), strict=True)
            if path.name not in skip}


async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


async def partition_count(bootstrap: str, topic: str) -> int:
    """How many partitions ``topic`` has on the broker now (0: unknown to it)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return sum(len(t.get("partitions") or ()) for t in described if t.get("topic") == topic)


async def produce(bootstrap: str, topic: str, records: list[tuple[str | None, bytes]],
                  placed: dict[str, int] | None = None) -> Offsets:
    """Send keyed records (no idempotence: tansu does not support it); returns partition -> end offset.

    ``placed`` (if given) receives key -> partition, as the default (murmur2 key hash) partitioner chose.
    """
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False, acks=1)
    await producer.start()
    ends: Offsets = {}
    try:
        for key, value in records:
            meta = await producer.send_and_wait(topic, value, key=key.encode() if key else None)
            ends[meta.partition] = max(ends.get(meta.partition, 0), meta.offset + 1)
            if placed is not None and key:
                placed[key] = meta.partition
    finally:
        await producer.stop()
    return ends


async def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int | None]:
    """The group's committed offsets, read by a separate consumer that never joins the group."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)}
    finally:
        await consumer.stop()


async def wait_committed(bootstrap: str, group: str, topic: str, partitions: int, want: Offsets,
                         timeout: float = 15.0) -> dict[int, int | None]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await committed(bootstrap, group, topic, partitions)
        if all(got.get(p) == end for p, end in want.items()) or loop.time() > deadline:
            return got
        await asyncio.sleep(0.2)


async def read_topic(bootstrap: str, topic: str, count: int, timeout: float = 15.0) -> list[Any]:
    """The first ``count`` records of partition 0 of ``topic``, read without a group (nothing is committed)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    out: list[Any] = []
    try:
        consumer.assign([TopicPartition(topic, 0)])
        deadline = asyncio.get_running_loop().time() + timeout
        while len(out) < count and asyncio.get_running_loop().time() < deadline:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                out.extend(records)
        return out
    finally:
        await consumer.stop()
