"""replay_wal (evald/receivers/wal_replay.py): a row counts as replayed only once all of it was handed over; a row
whose hand-over fails or is cut short by stopping is not counted and stays for the next start."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from evald.errors import QueueFullError
from evald.model import ConsumeResult, SignalBatch
from evald.receivers.wal import ReceiverWal, ReceiverWalConfig
from evald.receivers.wal_replay import replay_wal
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, sample, trace_request

REPLAYED = "evald_receiver_wal_replayed_requests_total"


class PartsConsumer(RecordingConsumer):
    """Splits every batch into one part per span (as the window does with a batch larger than it); the
    ``fail_at``-th part handed over raises."""

    def __init__(self, fail_at: int = 0) -> None:
        super().__init__()
        self.fail_at = fail_at

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        if self.calls + 1 == self.fail_at:
            self.errors.append(RuntimeError(f"part {self.fail_at}"))
        return super().consume(batch)

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        return [SignalBatch(spans=(s,), delivery=batch.delivery, source=batch.source) for s in batch.spans]


class Left:
    """A log written by an earlier process (rows kept: their deliveries were never released), reopened."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.telemetry = Telemetry()

    def wal(self) -> ReceiverWal:
        return ReceiverWal(ReceiverWalConfig(directory=str(self.directory)), "otlp", self.telemetry)

    async def write(self, *bodies: bytes) -> None:
        earlier = ReceiverWal(ReceiverWalConfig(directory=str(self.directory)), "otlp", Telemetry())
        await earlier.open()
        for body in bodies:
            entry = earlier.admit(len(body))
            entry.delivery.hold()  # held as the window would: the row stays
            await earlier.append(entry, "traces", "protobuf", body)
        await earlier.close()

    @property
    def replayed(self) -> float:
        return sample(self.telemetry.registry, REPLAYED, receiver="otlp")


@pytest.fixture
async def left(tmp_path: Path) -> AsyncIterator[Left]:
    log = Left(tmp_path / "wal")
    await log.write(trace_request(2, random_ids=True).SerializeToString())
    yield log


async def replay(log: Left, consumer: RecordingConsumer, stopping: Callable[[], bool] = lambda: False) -> int:
    """Replay into ``consumer``; returns the rows left in the log afterwards (asserting the count on the way)."""
    wal = log.wal()
    await wal.open()
    try:
        assert await replay_wal(wal, consumer, stopping) == log.replayed
    finally:
        await wal.close()  # finishes the pending deletes
    after = log.wal()
    await after.open()
    try:
        return after.rows
    finally:
        await after.close()


async def test_a_row_handed_over_whole_counts_as_replayed_and_goes(left: Left) -> None:
    consumer = PartsConsumer()
    assert await replay(left, consumer) == 0
    assert left.replayed == 1 and len(consumer.batches) == 2  # in two parts, one row


async def test_a_failed_hand_over_is_not_counted_and_the_row_stays(left: Left) -> None:
    assert await replay(left, RecordingConsumer(RuntimeError("window bug"))) == 1
    assert left.replayed == 0


async def test_a_failure_after_the_first_part_is_not_counted(left: Left) -> None:
    consumer = PartsConsumer(fail_at=2)
    assert await replay(left, consumer) == 1
    assert left.replayed == 0 and len(consumer.batches) == 1  # the first part was handed over, the second failed


async def test_stopping_while_the_window_is_full_is_not_counted(left: Left) -> None:
    full = RecordingConsumer(*(QueueFullError("full", retry_after=0.01) for _ in range(3)))
    calls = iter(range(100))
    assert await replay(left, full, stopping=lambda: next(calls) >= 3) == 1
    assert left.replayed == 0 and full.batches == []
