"""The shared sending helper every network exporter sits behind: bounded queue -> retry -> per-attempt timeout.

An exporter hands items (one serialised score each) to :meth:`SendingQueue.put` and supplies ``send(batch)``, which
raises ``RetryableError`` (optionally with the server's ``retry_after``), ``PermanentError``, ``PartiallyRejected``
or ``SendSingly`` (evald/exporters/sending_policy.py, where the ``sending_queue`` / ``retry_on_failure`` blocks and
the backoff live; docs/exporters.md has the whole behaviour).

Failure semantics:
  * ``put(items, ack)``: a full queue waits for room (``block_on_overflow``, default: backpressure reaches the
    receivers) or drops the rest as ``queue_full`` (sending_intake.py); an item too big for a batch is dropped as
    ``permanent_error``. Each item holds ``ack`` (the source's Delivery, acks.py) until it is sent or dropped and
    counted; with ``storage`` (persistent_queue.py) the acknowledgement is the fsync, and a restart sends the rest.
  * ``num_consumers`` tasks take up to ``batch_size`` items (``max_batch_bytes``) after a rate-limit token; each
    attempt runs under ``timeout``; a non-permanent failure is retried after the server's hint (which pauses every
    consumer) or a jittered backoff, until ``retry_on_failure.max_elapsed_time`` (then ``retries_exhausted``).
  * ``SendSingly`` (the server takes one item per request): from then on one item per batch; the refused batch's
    items are sent as batches of one, concurrently, each with its own token and retries (at most ``num_consumers``
    batches in flight); the refused request itself is not counted.
  * ``shutdown(timeout)``: stop accepting, send (and retry while it fits) until empty or the deadline, then cancel
    and count the rest as ``shutdown`` (a persistent queue keeps it on disk instead).

Self-metrics (sending_metrics.py): ``evald_exporter_sent_scores_total``, ``..._dropped_scores_total{reason}``,
``evald_exporter_retries_total{reason}``, ``..._queue_size``, ``..._queue_capacity``, by exporter, counted in scores.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from evald.errors import PermanentError
from evald.exporters.sending_buffer import Ack, Buffer, Entry, MemoryBuffer, release
from evald.exporters.sending_intake import Intake
from evald.exporters.sending_metrics import DROP_REASONS, ExporterInstruments, exporter_instruments
from evald.exporters.sending_policy import (
    PartiallyRejected,
    RetryOnFailureConfig,
    SendingQueueConfig,
    SendSingly,
    TokenBucket,
    describe_error,
    next_retry,
)
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)

__all__ = ["DROP_REASONS", "Codec", "ExporterInstruments", "SendingQueue", "exporter_instruments"]

T = TypeVar("T")
#: How a persistent queue stores an item: (encode to bytes, decode from bytes).
Codec = tuple[Callable[[T], bytes], Callable[[bytes], T]]


class SendingQueue(Generic[T]):
    """Bounded queue, consumers, retry and timeout around one ``send(batch)`` coroutine (module docstring)."""

    def __init__(
        self,
        exporter_id: str,
        send: Callable[[list[T]], Awaitable[None]],
        telemetry: Telemetry,
        *,
        queue: SendingQueueConfig,
        retry: RetryOnFailureConfig,
        timeout: float,
        batch_size: int = 100,
        max_batch_bytes: int | None = None,
        max_item_bytes: int | None = None,
        size_of: Callable[[T], int] = len,  # type: ignore[assignment]  # items are usually bytes
        rate_limiter: TokenBucket | None = None,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        codec: Codec[T] | None = None,
    ) -> None:
        self.exporter_id = exporter_id
        self._send = send
        self._queue_cfg = queue
        self._retry = retry
        self._timeout = timeout
        self._batch_size = max(1, batch_size)
        self._max_bytes = max_batch_bytes
        # an item that can never be sent: over ``max_item_bytes``, or alone over ``max_batch_bytes`` (JSON array)
        limits = [n for n in (max_item_bytes, None if max_batch_bytes is None else max_batch_bytes - 2)
                  if n is not None]
        self._max_item = min(limits) if limits else None
        self._size_of = size_of
        self._limiter = rate_limiter
        self._rng = rng
        self._clock = clock
        self._buffer: Buffer[T] = MemoryBuffer()
        if queue.storage is not None:
            if codec is None:
                raise ValueError(f"exporter {exporter_id}: a persistent queue needs a codec")
            from evald.exporters.persistent_queue import SqliteBuffer

            self._buffer = SqliteBuffer(queue.storage, exporter_id, codec, self._size_of)
        self._inflight: dict[int, list[Entry[T]]] = {}  # by consumer index, or a key >= num_consumers (SendSingly)
        self._keys = itertools.count(queue.num_consumers)
        self._slots = asyncio.Semaphore(queue.num_consumers)  # batches in flight at most
        self._not_empty = asyncio.Event()
        self._stopping = asyncio.Event()
        self._blocked_until = 0.0
        self._deadline: float | None = None
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._log = RateLimitedLog(logger)
        m = exporter_instruments(telemetry)
        self._sent = m.sent.labels(exporter_id)
        self._dropped = {reason: m.dropped.labels(exporter_id, reason) for reason in DROP_REASONS}
        self._retries = m.retries
        self._size_gauge = m.queue_size.labels(exporter_id)
        m.queue_capacity.labels(exporter_id).set(queue.queue_size)
        self._size_gauge.set(0)
        self._intake = Intake(self._buffer, queue, size_of=size_of, max_item=self._max_item, drop=self._drop,
                              added=self._added)

    # ---- producer side -------------------------------------------------------------------------------------

    @property
    def blocks(self) -> bool:
        """True when a full queue makes :meth:`put` wait (the pipeline must not time the wait out)."""
        return self._queue_cfg.block_on_overflow

    def submit(self, items: Sequence[T], ack: Ack | None = None) -> int:
        """Queue ``items`` without waiting (in-memory queue only); the rest are dropped as ``queue_full``."""
        return self._intake.submit(items, ack)

    async def put(self, items: Sequence[T], ack: Ack | None = None) -> int:
        """Queue ``items``, waiting for room while the queue is full if ``block_on_overflow`` (else the rest are
        dropped as ``queue_full``); returns how many were accepted (evald/exporters/sending_intake.py)."""
        return await self._intake.put(items, ack)

    def _added(self, n: int) -> None:
        if n:
            self._size_gauge.set(self._buffer.count)
            self._not_empty.set()

    @property
    def pending(self) -> int:
        """Items queued or in flight."""
        return self._buffer.count + sum(len(b) for b in self._inflight.values())

    async def drain(self, timeout: float) -> bool:
        """Wait until nothing is queued or in flight (tests, replay); False if ``timeout`` passed first."""
        end = self._clock() + timeout
        while self.pending:
            if self._clock() >= end:
                return False
            await asyncio.sleep(0.01)
        return True

    # ---- lifecycle ------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the queue (a persistent one loads what an earlier process left) and start the consumers."""
        if self._tasks or self._closing:
            return
        await self._buffer.open()
        self._size_gauge.set(self._buffer.count)
        if self._buffer.count:
            self._not_empty.set()
        self._tasks = [
            asyncio.create_task(self._consume(i), name=f"evald:{self.exporter_id}:sender-{i}")
            for i in range(self._queue_cfg.num_consumers)
        ]

    async def shutdown(self, timeout: float) -> None:
        """Stop accepting, send what is queued within ``timeout``, then cancel and count the rest. Idempotent."""
        if self._closing:
            return
        self._closing = True
        self._intake.close()  # producers waiting for room see the exporter closing
        self._deadline = self._clock() + max(0.0, timeout)
        self._stopping.set()
        self._not_empty.set()
        if self._tasks:
            _, still_running = await asyncio.wait(self._tasks, timeout=max(0.0, timeout))
            for task in still_running:
                task.cancel()
            for task in still_running:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        left = self.pending
        inflight = [e for batch in self._inflight.values() for e in batch]
        self._inflight.clear()
        self._size_gauge.set(0)
        if self._buffer.durable:
            if left:
                logger.warning("exporter %s: %d score(s) left in the persistent queue for the next start",
                               self.exporter_id, left)
        elif left:
            self._drop("shutdown", left, f"shutdown deadline ({timeout:g}s) passed")
        release(inflight)
        await self._buffer.close()

    # ---- consumers ------------------------------------------------------------------------------------------

    async def _consume(self, index: int) -> None:
        while True:
            while not self._buffer.count:
                if self._closing:
                    return
                self._not_empty.clear()
                await self._not_empty.wait()
            async with self._slots:
                await self._wait_gate()
                batch = await self._buffer.take(self._batch_size, self._max_bytes)
                self._size_gauge.set(self._buffer.count)
                self._intake.room_made()
                if not batch:  # another consumer emptied the queue meanwhile
                    if self._limiter is not None:
                        self._limiter.refund()
                    continue
                self._inflight[index] = batch
                singly = await self._guarded(index)
            if singly:  # outside the slot: the items take slots of their own
                await self._send_singly(index)

    async def _guarded(self, key: int, single: bool = False) -> bool:
        """Deliver ``_inflight[key]``; True when the server asked for one item per request (:class:`SendSingly`)."""
        entries = self._inflight.get(key, [])
        try:
            return await self._deliver(key, entries, single)
        except Exception:  # a bug here must not end the consumer
            await self._finish(key, dropped=("permanent_error", len(entries)))
            logger.exception("exporter %s: unexpected error while sending", self.exporter_id)
            return False

    async def _send_singly(self, index: int) -> None:
        """The batch ``index`` holds, as concurrent batches of one, each under a slot and its own rate-limit token."""
        keys = [next(self._keys) for _ in self._inflight.get(index, [])]
        self._inflight.update(zip(keys, ([entry] for entry in self._inflight.pop(index, [])), strict=True))

        async def one(key: int) -> None:
            async with self._slots:
                await self._wait_gate()
                await self._guarded(key, single=True)

        await asyncio.gather(*(one(key) for key in keys))

    async def _wait_gate(self) -> None:
        """Honour a server's pause (Retry-After seen by any consumer), then the rate limit."""
        pause = self._blocked_until - self._clock()
        if pause > 0:
            await asyncio.sleep(pause)
        if self._limiter is not None:
            await self._limiter.acquire()

    async def _deliver(self, index: int, entries: list[Entry[T]], single: bool = False) -> bool:
        first_attempt = self._clock()
        batch = [e.item for e in entries]
        retry = 0
        while True:
            if retry:
                await self._wait_gate()
            try:
                async with asyncio.timeout(self._timeout):
                    await self._send(batch)
            except PartiallyRejected as err:
                rejected = min(max(err.rejected, 0), len(batch))
                await self._finish(index, sent=len(batch) - rejected, dropped=("permanent_error", rejected),
                                   why=str(err))
                return False
            except SendSingly as err:
                if single:  # refused alone too: it can never be sent
                    await self._finish(index, dropped=("permanent_error", len(batch)), why=str(err))
                    return False
                self._batch_size = 1
                return True
            except PermanentError as err:
                await self._finish(index, dropped=("permanent_error", len(batch)), why=str(err))
                return False
            except Exception as err:
                now = self._clock()
                delay, hint, reason = next_retry(err, retry, now - first_attempt, self._retry, self._rng)
                if delay is None:
                    await self._finish(index, dropped=("retries_exhausted", len(batch)), why=describe_error(err))
                    return False
                self._retries.labels(self.exporter_id, reason).inc()
                self._log.log(logging.WARNING, f"retry:{self.exporter_id}:{reason}",
                              "exporter %s: send failed (%s), retrying in %.2fs", self.exporter_id,
                              describe_error(err), delay)
                if hint:
                    self._blocked_until = max(self._blocked_until, now + delay)
                retry += 1
                if not await self._sleep(delay):
                    if self._buffer.durable:  # it stays on disk for the next start
                        self._inflight.pop(index, None)
                    else:
                        await self._finish(index, dropped=("shutdown", len(batch)),
                                           why="retry would pass the deadline")
                    return False
            else:
                await self._finish(index, sent=len(batch))
                return False

    async def _sleep(self, delay: float) -> bool:
        """Sleep ``delay``; False (at once) when shutdown starts and the wait would end past its deadline."""
        end = self._clock() + delay
        if not self._closing:
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=delay)
            except TimeoutError:
                return True
        if self._deadline is not None and end > self._deadline:
            return False
        await asyncio.sleep(max(0.0, end - self._clock()))
        return True

    async def _finish(self, index: int, sent: int = 0, dropped: tuple[str, int] | None = None, why: str = "") -> None:
        entries = self._inflight.pop(index, [])
        await self._buffer.finish(entries)  # memory: releases the acks; persistent: deletes the rows
        self._intake.room_made()
        if sent:
            self._sent.inc(sent)
        if dropped is not None and dropped[1]:
            self._drop(dropped[0], dropped[1], why)

    def _drop(self, reason: str, count: int, why: str) -> None:
        self._dropped[reason].inc(count)
        self._log.log(logging.WARNING, f"drop:{self.exporter_id}:{reason}", "exporter %s dropped %d score(s) (%s): %s",
                      self.exporter_id, count, reason, why)

