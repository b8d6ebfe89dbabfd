"""Reading back what the ingest role produced, and small waiting helpers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from evald.ingest.forwarder import IngestConfig


def ingest_config(bootstrap: str, **overrides: object) -> IngestConfig:
    suffix = uuid.uuid4().hex[:8]
    base: dict[str, object] = {"brokers": [bootstrap], "traces": {"topic": f"ingest_spans_{suffix}"},
                               "logs": {"topic": f"ingest_logs_{suffix}"}, "request_timeout": "2s",
                               "backoff": "200ms"}
    return IngestConfig.model_validate({**base, **overrides})


async def read_topic(bootstrap: str, topic: str, want: int, timeout: float = 15.0) -> list[tuple[str, bytes]]:
    """(key, value) of the first ``want`` records of ``topic`` (all partitions), read without a group."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    out: list[tuple[str, bytes]] = []
    try:
        async with asyncio.timeout(timeout):
            while len(out) < want:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    out += [(r.key.decode(), r.value) for r in records]
    finally:
        await consumer.stop()
    return out


async def wait_until(predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll ``predicate`` until true; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)
