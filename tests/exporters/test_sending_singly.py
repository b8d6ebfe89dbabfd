"""The shared sending helper when a server takes one item per request (``SendSingly``): the refused batch is sent item
by item, later batches hold one item, the concurrency bound and the acknowledgements hold as for any batch."""

from __future__ import annotations

import asyncio

from evald.exporters.sending import DROP_REASONS, SendingQueue
from evald.exporters.sending_policy import RetryableError, RetryOnFailureConfig, SendingQueueConfig, SendSingly
from evald.model import Delivery
from evald.telemetry import Telemetry

ID = "test/singly"


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": ID, **labels}) or 0.0


class OneAtATime:
    """A ``send`` refusing any batch of more than one item; counts its concurrent calls; fails chosen items once."""

    def __init__(self, fail_once: frozenset[bytes] = frozenset(), delay: float = 0.02) -> None:
        self.sizes: list[int] = []
        self.delivered: list[bytes] = []
        self.concurrent = self.max_concurrent = 0
        self._fail_once = set(fail_once)
        self._delay = delay

    async def __call__(self, batch: list[bytes]) -> None:
        self.sizes.append(len(batch))
        self.concurrent += 1
        self.max_concurrent = max(self.max_concurrent, self.concurrent)
        try:
            await asyncio.sleep(self._delay)
            if len(batch) > 1:
                raise SendSingly("one item per request")
            if batch[0] in self._fail_once:
                self._fail_once.discard(batch[0])
                raise RetryableError("HTTP 503", reason="server_error")
            self.delivered.extend(batch)
        finally:
            self.concurrent -= 1


def queue_for(send: OneAtATime, tm: Telemetry, consumers: int = 3) -> SendingQueue[bytes]:
    return SendingQueue(ID, send, tm, queue=SendingQueueConfig(queue_size=100, num_consumers=consumers),
                        retry=RetryOnFailureConfig(initial_interval=0.02, max_interval=0.05), timeout=2.0,
                        batch_size=10)


async def test_a_refused_batch_is_sent_item_by_item_and_later_batches_hold_one_item() -> None:
    tm = Telemetry()
    send = OneAtATime(fail_once=frozenset({b"s03"}))
    queue = queue_for(send, tm)
    await queue.start()
    delivery = Delivery()
    queue.submit([f"s{i:02d}".encode() for i in range(10)], delivery)
    delivery.seal()
    assert await queue.drain(5)
    assert delivery.done
    queue.submit([f"t{i:02d}".encode() for i in range(6)])
    assert await queue.drain(5)
    await queue.shutdown(1)
    assert sorted(send.delivered) == sorted([f"s{i:02d}".encode() for i in range(10)]
                                            + [f"t{i:02d}".encode() for i in range(6)])
    assert send.sizes[0] == 10 and send.sizes[1:] == [1] * (len(send.sizes) - 1)
    assert len(send.sizes) == 1 + 10 + 1 + 6  # the refused batch, its items, one retry, the later items
    assert send.max_concurrent == 3
    assert sample(tm, "evald_exporter_sent_scores_total") == 16
    assert sample(tm, "evald_exporter_retries_total", reason="server_error") == 1
    assert sum(sample(tm, "evald_exporter_dropped_scores_total", reason=r) for r in DROP_REASONS) == 0


async def test_an_item_refused_alone_for_its_form_is_a_permanent_error() -> None:
    tm = Telemetry()

    async def refuse(batch: list[bytes]) -> None:
        raise SendSingly("never")

    queue: SendingQueue[bytes] = SendingQueue(ID, refuse, tm, queue=SendingQueueConfig(num_consumers=2),
                                              retry=RetryOnFailureConfig(), timeout=1.0, batch_size=5)
    await queue.start()
    delivery = Delivery()
    queue.submit([b"a", b"b", b"c"], delivery)
    delivery.seal()
    assert await queue.drain(5)
    await queue.shutdown(1)
    assert delivery.done
    assert sample(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 3


async def test_shutdown_counts_items_of_a_refused_batch_still_waiting_for_their_turn() -> None:
    tm = Telemetry()
    send = OneAtATime(delay=0.3)
    queue = queue_for(send, tm, consumers=1)
    await queue.start()
    delivery = Delivery()
    queue.submit([f"s{i:02d}".encode() for i in range(5)], delivery)
    delivery.seal()
    await asyncio.sleep(0.45)  # the refused batch (0.3 s), then the first item in flight
    assert queue.pending == 5
    await queue.shutdown(0.3)
    assert delivery.done  # every hold released: sent or counted
    sent = sample(tm, "evald_exporter_sent_scores_total")
    assert sent == len(send.delivered) and sent >= 1
    assert sent + sample(tm, "evald_exporter_dropped_scores_total", reason="shutdown") == 5
