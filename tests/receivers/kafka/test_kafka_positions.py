"""Committed offsets beyond the log end are reset on assignment (evald/receivers/kafka_positions.py)."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import pytest

from evald.receivers.kafka_positions import rewind_beyond_end


class TP(NamedTuple):
    topic: str
    partition: int


class FakeConsumer:
    """The four aiokafka consumer calls the check uses, over fixed offsets."""

    def __init__(self, committed: dict[TP, int | None], beginning: dict[TP, int], end: dict[TP, int],
                 stall: float = 0.0) -> None:
        self._committed, self._beginning, self._end, self._stall = dict(committed), beginning, end, stall
        self.sought: dict[TP, int] = {}

    async def end_offsets(self, partitions: list[TP]) -> dict[TP, int]:
        await asyncio.sleep(self._stall)
        return {tp: self._end[tp] for tp in partitions}

    async def beginning_offsets(self, partitions: list[TP]) -> dict[TP, int]:
        return {tp: self._beginning[tp] for tp in partitions}

    async def committed(self, tp: TP) -> int | None:
        return self._committed.get(tp)

    async def commit(self, offsets: dict[TP, int]) -> None:
        self._committed.update(offsets)

    def seek(self, tp: TP, offset: int) -> None:
        self.sought[tp] = offset


A, B, C = TP("spans", 0), TP("spans", 1), TP("spans", 2)


@pytest.mark.parametrize(("initial_offset", "target"), [("earliest", 2), ("latest", 5)])
async def test_only_offsets_beyond_the_end_are_reset_by_initial_offset(initial_offset: str, target: int) -> None:
    consumer = FakeConsumer(committed={A: 9, B: 4, C: None}, beginning={A: 2, B: 0, C: 0}, end={A: 5, B: 7, C: 3})
    assert await rewind_beyond_end(consumer, [A, B, C], initial_offset, 5.0, "kafka") == [A]
    assert consumer.sought == {A: target}
    assert await consumer.committed(A) == target  # committed too: the consumer positions itself from it
    assert await consumer.committed(B) == 4 and await consumer.committed(C) is None


async def test_a_broker_that_does_not_answer_leaves_the_positions_alone(caplog: pytest.LogCaptureFixture) -> None:
    consumer: Any = FakeConsumer(committed={A: 9}, beginning={A: 0}, end={A: 0}, stall=5.0)
    assert await rewind_beyond_end(consumer, [A], "earliest", 0.05, "kafka") == []
    assert consumer.sought == {}
    assert "TimeoutError" in caplog.text


async def test_nothing_assigned_asks_nothing() -> None:
    assert await rewind_beyond_end(object(), [], "earliest", 1.0, "kafka") == []
