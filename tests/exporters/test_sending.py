"""The shared sending helper: batching, bounded queue, retry with backoff and server hints, timeouts, shutdown."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

import pytest
from pydantic import ValidationError

from evald.errors import PermanentError
from evald.exporters.sending import DROP_REASONS, SendingQueue
from evald.exporters.sending_policy import (
    HINT_JITTER,
    PartiallyRejected,
    RetryableError,
    RetryOnFailureConfig,
    SendingQueueConfig,
    TokenBucket,
    backoff_delay,
    format_http_date,
    parse_retry_after,
)
from evald.telemetry import Telemetry

ID = "test/exp"


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": ID, **labels}) or 0.0


def dropped(tm: Telemetry, reason: str) -> float:
    return sample(tm, "evald_exporter_dropped_scores_total", reason=reason)


def items(n: int, prefix: str = "s") -> list[bytes]:
    return [f"{prefix}{i:04d}".encode() for i in range(n)]


class Recorder:
    """A ``send`` that records each call's batch and start time; ``behaviour`` decides per call what happens."""

    def __init__(self, behaviour: Callable[[int, list[bytes]], Awaitable[None]] | None = None) -> None:
        self.calls: list[tuple[float, list[bytes]]] = []
        self.delivered: list[bytes] = []
        self._behaviour = behaviour

    async def __call__(self, batch: list[bytes]) -> None:
        self.calls.append((time.monotonic(), list(batch)))
        if self._behaviour is not None:
            await self._behaviour(len(self.calls), batch)
        self.delivered.extend(batch)

    def gaps(self) -> list[float]:
        return [b[0] - a[0] for a, b in zip(self.calls, self.calls[1:], strict=False)]


def make(send: Callable[[list[bytes]], Awaitable[None]], tm: Telemetry, *, queue_size: int = 1000,
         consumers: int = 1, timeout: float = 2.0, **kw: object) -> SendingQueue[bytes]:
    retry = kw.pop("retry", RetryOnFailureConfig(initial_interval=0.01, max_interval=0.05, max_elapsed_time=5))
    assert isinstance(retry, RetryOnFailureConfig)
    return SendingQueue(ID, send, tm, queue=SendingQueueConfig(queue_size=queue_size, num_consumers=consumers),
                        retry=retry, timeout=timeout, **kw)  # type: ignore[arg-type]


async def test_sends_everything_in_bounded_batches() -> None:
    tm, send = Telemetry(), Recorder()
    q = make(send, tm, batch_size=100)
    assert q.submit(items(250)) == 250  # queued before the consumer starts: batches are full
    await q.start()
    assert await q.drain(5)
    assert sorted(send.delivered) == items(250)
    assert [len(b) for _, b in send.calls] == [100, 100, 50]
    assert sample(tm, "evald_exporter_sent_scores_total") == 250
    assert sample(tm, "evald_exporter_queue_size") == 0
    assert sample(tm, "evald_exporter_queue_capacity") == 1000
    await q.shutdown(1)


async def test_batches_respect_the_byte_limit_and_oversized_items_are_refused() -> None:
    tm, send = Telemetry(), Recorder()
    q = make(send, tm, batch_size=100, max_batch_bytes=50)
    assert q.submit([*items(10), b"x" * 49]) == 10
    assert dropped(tm, "permanent_error") == 1
    await q.start()
    assert await q.drain(5)
    for _, batch in send.calls:  # a JSON array of them: brackets, items, commas
        assert 2 + sum(len(i) for i in batch) + len(batch) - 1 <= 50
    assert len(send.delivered) == 10
    await q.shutdown(1)


async def test_a_full_queue_drops_and_counts() -> None:
    tm, send = Telemetry(), Recorder()
    q = make(send, tm, queue_size=5)
    assert q.submit(items(8)) == 5
    assert dropped(tm, "queue_full") == 3
    assert sample(tm, "evald_exporter_queue_size") == 5
    await q.start()
    assert await q.drain(5)
    assert len(send.delivered) == 5
    await q.shutdown(1)


async def test_permanent_errors_are_not_retried() -> None:
    async def refuse(call: int, batch: list[bytes]) -> None:
        raise PermanentError("HTTP 400: bad body")

    tm, send = Telemetry(), Recorder(refuse)
    q = make(send, tm)
    q.submit(items(7))
    await q.start()
    assert await q.drain(5)
    await asyncio.sleep(0.05)
    assert len(send.calls) == 1
    assert dropped(tm, "permanent_error") == 7
    assert sample(tm, "evald_exporter_sent_scores_total") == 0
    await q.shutdown(1)


async def test_partial_rejection_counts_the_rejected_and_is_not_retried() -> None:
    async def partly(call: int, batch: list[bytes]) -> None:
        raise PartiallyRejected("2 rejected", rejected=2)

    tm, send = Telemetry(), Recorder(partly)
    q = make(send, tm)
    q.submit(items(5))
    await q.start()
    assert await q.drain(5)
    assert len(send.calls) == 1
    assert dropped(tm, "permanent_error") == 2
    assert sample(tm, "evald_exporter_sent_scores_total") == 3
    await q.shutdown(1)


async def test_the_server_retry_hint_is_honoured() -> None:
    async def throttle_once(call: int, batch: list[bytes]) -> None:
        if call == 1:
            raise RetryableError("HTTP 429", retry_after=0.3, reason="throttled")

    tm, send = Telemetry(), Recorder(throttle_once)
    q = make(send, tm)  # backoff would wait only 0.01s: the hint must win
    q.submit(items(3))
    await q.start()
    assert await q.drain(5)
    assert len(send.calls) == 2
    assert 0.3 <= send.gaps()[0] <= 0.3 * (1 + HINT_JITTER) + 0.15
    assert sample(tm, "evald_exporter_retries_total", reason="throttled") == 1
    assert sample(tm, "evald_exporter_sent_scores_total") == 3
    await q.shutdown(1)


async def test_a_retry_hint_pauses_every_consumer() -> None:
    async def behaviour(call: int, batch: list[bytes]) -> None:
        if batch == [b"a"] and call == 1:
            raise RetryableError("HTTP 429", retry_after=0.4, reason="throttled")

    tm, send = Telemetry(), Recorder(behaviour)
    q = make(send, tm, consumers=2, batch_size=1)
    await q.start()
    t0 = time.monotonic()
    q.submit([b"a"])
    await asyncio.sleep(0.1)
    q.submit([b"c"])  # the other consumer is free, but the server asked everyone to wait
    assert await q.drain(5)
    started = {bytes(b[0]): t for t, b in send.calls[1:]}
    assert started[b"c"] - t0 >= 0.4
    await q.shutdown(1)


def test_backoff_grows_is_capped_and_its_jitter_is_bounded() -> None:
    cfg = RetryOnFailureConfig(initial_interval=1, max_interval=10, multiplier=2, randomization_factor=0.5)
    assert [backoff_delay(n, cfg, lambda: 0.5) for n in range(6)] == [1, 2, 4, 8, 10, 10]
    rng = random.Random(7).random
    for n in range(30):
        base = min(1 * 2**n, 10)
        assert backoff_delay(n, cfg, lambda: 0.0) == pytest.approx(base * 0.5)
        assert backoff_delay(n, cfg, lambda: 1.0) == pytest.approx(base * 1.5)
        assert base * 0.5 <= backoff_delay(n, cfg, rng) <= base * 1.5
    assert backoff_delay(10_000, cfg, lambda: 0.5) == 10  # no overflow


async def test_backoff_without_a_hint_waits_growing_intervals() -> None:
    async def fail_twice(call: int, batch: list[bytes]) -> None:
        if call <= 2:
            raise ConnectionError("refused")

    tm, send = Telemetry(), Recorder(fail_twice)
    retry = RetryOnFailureConfig(initial_interval=0.1, max_interval=1, multiplier=2, randomization_factor=0)
    q = make(send, tm, retry=retry)
    q.submit(items(1))
    await q.start()
    assert await q.drain(5)
    first, second = send.gaps()
    assert 0.1 <= first < 0.18 and 0.2 <= second < 0.3
    assert sample(tm, "evald_exporter_retries_total", reason="error") == 2
    await q.shutdown(1)


async def test_retries_stop_after_max_elapsed_time() -> None:
    async def always(call: int, batch: list[bytes]) -> None:
        raise RetryableError("HTTP 503", reason="server_error")

    tm, send = Telemetry(), Recorder(always)
    retry = RetryOnFailureConfig(initial_interval=0.05, max_interval=0.05, max_elapsed_time=0.3)
    q = make(send, tm, retry=retry)
    q.submit(items(4))
    t0 = time.monotonic()
    await q.start()
    assert await q.drain(5)
    assert time.monotonic() - t0 < 1.0
    assert len(send.calls) >= 3
    assert dropped(tm, "retries_exhausted") == 4
    await q.shutdown(1)


async def test_with_retry_disabled_one_attempt_then_drop() -> None:
    async def always(call: int, batch: list[bytes]) -> None:
        raise RetryableError("HTTP 503")

    tm, send = Telemetry(), Recorder(always)
    q = make(send, tm, retry=RetryOnFailureConfig(enabled=False))
    q.submit(items(2))
    await q.start()
    assert await q.drain(5)
    assert len(send.calls) == 1 and dropped(tm, "retries_exhausted") == 2
    await q.shutdown(1)


async def test_each_attempt_has_a_timeout_and_a_timed_out_attempt_is_retried() -> None:
    async def hang_once(call: int, batch: list[bytes]) -> None:
        if call == 1:
            await asyncio.sleep(10)

    tm, send = Telemetry(), Recorder(hang_once)
    q = make(send, tm, timeout=0.1)
    q.submit(items(2))
    t0 = time.monotonic()
    await q.start()
    assert await q.drain(5)
    assert time.monotonic() - t0 < 1.0
    assert send.delivered == items(2)
    assert sample(tm, "evald_exporter_retries_total", reason="timeout") == 1
    await q.shutdown(1)


async def test_shutdown_flushes_what_is_queued() -> None:
    async def slow(call: int, batch: list[bytes]) -> None:
        await asyncio.sleep(0.02)

    tm, send = Telemetry(), Recorder(slow)
    q = make(send, tm, batch_size=10, consumers=2)
    await q.start()
    q.submit(items(100))
    t0 = time.monotonic()
    await q.shutdown(5)
    assert time.monotonic() - t0 < 2
    assert sorted(send.delivered) == items(100)
    assert sample(tm, "evald_exporter_sent_scores_total") == 100
    assert dropped(tm, "shutdown") == 0
    assert q.submit(items(3)) == 0  # closed
    assert dropped(tm, "shutdown") == 3


async def test_shutdown_keeps_its_deadline_and_counts_the_rest() -> None:
    never = asyncio.Event()

    async def hang(call: int, batch: list[bytes]) -> None:
        await never.wait()

    tm, send = Telemetry(), Recorder(hang)
    q = make(send, tm, batch_size=5, timeout=60)
    await q.start()
    q.submit(items(12))
    await asyncio.sleep(0.05)
    t0 = time.monotonic()
    await q.shutdown(0.3)
    assert 0.25 <= time.monotonic() - t0 < 0.8
    assert dropped(tm, "shutdown") == 12  # 5 in flight + 7 queued
    assert sample(tm, "evald_exporter_queue_size") == 0
    await q.shutdown(0.3)  # idempotent
    assert dropped(tm, "shutdown") == 12


async def test_shutdown_drops_at_once_a_batch_whose_retry_would_pass_the_deadline() -> None:
    async def throttled(call: int, batch: list[bytes]) -> None:
        raise RetryableError("HTTP 429", retry_after=30, reason="throttled")

    tm, send = Telemetry(), Recorder(throttled)
    retry = RetryOnFailureConfig(initial_interval=0.01, max_interval=0.05, max_elapsed_time=0)
    q = make(send, tm, retry=retry)
    await q.start()
    q.submit(items(3))
    await asyncio.sleep(0.05)
    t0 = time.monotonic()
    await q.shutdown(2)
    assert time.monotonic() - t0 < 0.5
    assert dropped(tm, "shutdown") == 3


async def test_shutdown_without_start_counts_what_was_queued() -> None:
    tm = Telemetry()
    q = make(Recorder(), tm)
    q.submit(items(4))
    await q.shutdown(1)
    assert dropped(tm, "shutdown") == 4


class Ack:
    """Counts holds and releases, as the pipeline's Delivery would."""

    def __init__(self) -> None:
        self.held = self.released = 0

    def hold(self) -> None:
        self.held += 1

    def release(self) -> None:
        self.released += 1

    @property
    def open(self) -> int:
        return self.held - self.released


async def test_put_waits_for_room_in_arrival_order_and_drops_nothing() -> None:
    tm, gate = Telemetry(), asyncio.Event()

    async def held(call: int, batch: list[bytes]) -> None:
        await gate.wait()

    send = Recorder(held)
    q = make(send, tm, queue_size=4, batch_size=2)
    await q.start()
    assert q.blocks
    assert await q.put(items(6, "a")) == 6  # 2 in flight, 4 waiting
    first = asyncio.create_task(q.put(items(3, "b")))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(q.put(items(2, "c")))
    await asyncio.sleep(0.1)
    assert not first.done() and not second.done() and q.pending == 6
    gate.set()
    assert await asyncio.wait_for(first, 5) == 3 and await asyncio.wait_for(second, 5) == 2
    assert await q.drain(5)
    await q.shutdown(1)
    assert send.delivered == items(6, "a") + items(3, "b") + items(2, "c")  # one consumer: arrival order
    assert sum(dropped(tm, r) for r in DROP_REASONS) == 0


async def test_put_without_block_on_overflow_drops_the_rest() -> None:
    tm = Telemetry()
    q = SendingQueue(ID, Recorder(), tm, queue=SendingQueueConfig(queue_size=3, block_on_overflow=False),
                     retry=RetryOnFailureConfig(initial_interval=0.01, max_interval=0.05), timeout=1)
    assert not q.blocks
    assert await q.put(items(5)) == 3
    assert dropped(tm, "queue_full") == 2
    await q.shutdown(0)


async def test_a_cancelled_or_closed_wait_counts_its_items_as_shutdown() -> None:
    tm = Telemetry()

    async def never(call: int, batch: list[bytes]) -> None:
        await asyncio.Event().wait()

    q = make(Recorder(never), tm, queue_size=2, batch_size=1, consumers=1, timeout=30)
    await q.start()
    await q.put(items(3))  # 1 in flight, 2 waiting: full
    cancelled = asyncio.create_task(q.put(items(4, "x")))
    await asyncio.sleep(0.05)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert dropped(tm, "shutdown") == 4
    waiting = asyncio.create_task(q.put(items(5, "y")))
    await asyncio.sleep(0.05)
    await q.shutdown(0.1)
    assert await asyncio.wait_for(waiting, 1) == 0
    assert dropped(tm, "shutdown") == 4 + 5 + 3  # the waiting producer's 5, then the queue's 3 at the deadline


async def test_the_ack_is_held_per_item_until_sent_or_dropped() -> None:
    tm = Telemetry()

    async def behaviour(call: int, batch: list[bytes]) -> None:
        if batch[0].startswith(b"bad"):
            raise PermanentError("refused")
        if batch[0].startswith(b"slow"):
            await asyncio.Event().wait()

    q = make(Recorder(behaviour), tm, batch_size=1, consumers=1, timeout=30)
    sent, bad, slow = Ack(), Ack(), Ack()
    await q.put(items(3, "ok"), sent)
    await q.put(items(2, "bad"), bad)
    await q.put(items(4, "slow"), slow)
    assert (sent.open, bad.open, slow.open) == (3, 2, 4)  # queued: nothing released yet
    await q.start()
    await asyncio.sleep(0.2)
    assert (sent.open, bad.open, slow.open) == (0, 0, 4)  # delivered, dropped (counted), still in flight
    assert dropped(tm, "permanent_error") == 2
    await q.shutdown(0.1)
    assert slow.open == 0 and dropped(tm, "shutdown") == 4  # given up at the deadline: counted, then released


def test_retry_after_seconds_and_http_dates() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("-3") is None
    assert parse_retry_after("soon") is None
    now = 1_700_000_000.0
    assert parse_retry_after(format_http_date(now + 5), now=now) == pytest.approx(5.0)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 0.0


async def test_token_bucket_spaces_requests_and_refunds() -> None:
    bucket = TokenBucket(rate_per_minute=600)  # 10 per second, no burst
    t0 = time.monotonic()
    for _ in range(5):
        await bucket.acquire()
    assert 0.38 <= time.monotonic() - t0 < 0.7
    bucket.refund()
    t1 = time.monotonic()
    await bucket.acquire()
    assert time.monotonic() - t1 < 0.05


def test_retry_config_names_the_keys_it_rejects() -> None:
    with pytest.raises(ValidationError, match="`max_interval` \\(1s\\) must be >= `initial_interval` \\(5s\\)"):
        RetryOnFailureConfig(initial_interval=5, max_interval=1)
    with pytest.raises(ValidationError, match="max_elapsed_time"):
        RetryOnFailureConfig(initial_interval=5, max_elapsed_time=1)
    assert RetryOnFailureConfig.model_validate({"initial_interval": "250ms", "max_elapsed_time": "0s"})
    with pytest.raises(ValidationError):
        SendingQueueConfig(queue_size=0)
