"""The case queue stays a bounded FIFO and reports each item's time in the queue, exposed as a histogram."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, generate_latest

from evald.pipeline.case_queue import CaseQueue, WaitHistogram


async def test_items_come_out_in_order_each_with_its_own_wait() -> None:
    waits: list[float] = []
    queue: CaseQueue[str] = CaseQueue(2, waits.append)
    await queue.put("first")
    await asyncio.sleep(0.1)  # the wait being measured
    await queue.put("second")
    assert queue.full()
    assert [queue.get_nowait(), await queue.get()] == ["first", "second"]
    assert len(waits) == 2 and waits[0] >= 0.1 and waits[0] > waits[1] >= 0.0


async def test_a_full_queue_makes_put_wait_and_that_wait_is_not_counted() -> None:
    waits: list[float] = []
    queue: CaseQueue[int] = CaseQueue(1, waits.append)
    await queue.put(1)
    blocked = asyncio.create_task(queue.put(2))
    await asyncio.sleep(0.2)  # the producer waits for room
    assert not blocked.done()
    assert queue.get_nowait() == 1
    await asyncio.wait_for(blocked, 5)
    assert queue.get_nowait() == 2
    assert waits[0] >= 0.2 and waits[1] < 0.2  # the second item only waited from the moment it entered


def test_the_histogram_is_exposed_unlabelled_with_cumulative_buckets() -> None:
    registry = CollectorRegistry()
    histogram = WaitHistogram("evald_queue_wait_seconds", "Time in the queue.", (0.01, 1.0), registry)
    for value in (0.005, 0.5, 0.7, 3.0):
        histogram.observe(value)
    text = generate_latest(registry).decode()
    assert 'evald_queue_wait_seconds_bucket{le="0.01"} 1.0' in text
    assert 'evald_queue_wait_seconds_bucket{le="1.0"} 3.0' in text
    assert 'evald_queue_wait_seconds_bucket{le="+Inf"} 4.0' in text
    assert "evald_queue_wait_seconds_count 4.0" in text
    assert registry.get_sample_value("evald_queue_wait_seconds_sum") == 4.205
