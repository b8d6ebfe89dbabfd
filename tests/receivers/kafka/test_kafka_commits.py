"""The receiver's offset commits survive aiokafka cancelling its own commit request (a broker restart, a rejoin):
the failure is counted and retried, and only a stop of the receiver's own task ends a commit."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from evald.receivers.kafka import KafkaReceiver, KafkaReceiverConfig
from evald.receivers.kafka_offsets import PartitionOffsets
from evald.telemetry import Telemetry


class TP(NamedTuple):
    topic: str
    partition: int


class CancellingConsumer:
    """``commit()`` raises the CancelledError of a future aiokafka cancelled itself, ``fail`` times, then works."""

    def __init__(self, fail: int = 1, hang: bool = False) -> None:
        self.fail, self.hang = fail, hang
        self.committed: dict[TP, int] = {}

    async def commit(self, offsets: dict[TP, int]) -> None:
        if self.hang:
            await asyncio.Event().wait()
        if self.fail:
            self.fail -= 1
            cancelled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            cancelled.cancel()
            await cancelled  # what awaiting a request future the client library cancelled looks like
        self.committed.update(offsets)


def receiver(consumer: Any) -> tuple[KafkaReceiver, Telemetry]:
    telemetry = Telemetry()
    rx = KafkaReceiver(KafkaReceiverConfig.model_validate({"traces": {"topic": "spans"}}), telemetry)
    rx._consumer = consumer
    done = PartitionOffsets()
    for offset in range(3):
        done.start(offset)
        done.done(offset)
    rx._offsets = {TP("spans", 0): done}
    return rx, telemetry


def commits(telemetry: Telemetry, outcome: str) -> float:
    return telemetry.registry.get_sample_value("evald_kafka_commits_total",
                                               {"receiver": "kafka", "outcome": outcome}) or 0.0


async def test_a_commit_cancelled_by_the_client_library_is_counted_and_retried() -> None:
    consumer = CancellingConsumer(fail=1)
    rx, telemetry = receiver(consumer)
    await rx.commit()  # does not raise: the commit loop must live on
    assert commits(telemetry, "failed") == 1 and rx._dirty.is_set() and consumer.committed == {}
    await rx.commit()
    assert commits(telemetry, "success") == 1 and consumer.committed == {TP("spans", 0): 3}


async def test_stopping_the_task_still_cancels_a_commit() -> None:
    rx, telemetry = receiver(CancellingConsumer(fail=0, hang=True))
    task = asyncio.create_task(rx.commit(timeout=30))
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and commits(telemetry, "failed") == 0


async def test_the_commit_loop_outlives_a_cancelled_commit() -> None:
    consumer = CancellingConsumer(fail=2)
    rx, telemetry = receiver(consumer)
    rx.config = rx.config.model_copy(update={"commit_interval": 0.01})
    loop_task = asyncio.create_task(rx._commit_loop())
    try:
        rx._dirty.set()
        for _ in range(200):
            if consumer.committed:
                break
            await asyncio.sleep(0.01)
        assert consumer.committed == {TP("spans", 0): 3} and commits(telemetry, "failed") == 2
        assert not loop_task.done()
    finally:
        loop_task.cancel()
        await asyncio.gather(loop_task, return_exceptions=True)
