"""Poison records of the ``kafka`` receiver: count, log once, optionally copy to a dead-letter topic, then skip.

Config keys (``receivers: kafka: dead_letter:``; ``null``, the default, turns the copy off)::

    dead_letter:
      topic: otlp_spans_dlq      # must exist (or be auto-created by the brokers)
      brokers: null              # null = the receiver's brokers; the receiver's `auth` is used either way
      max_attempts: 10           # copy attempts per record before giving up (see below)
      backoff: 1s                # delay after the first failed attempt; doubles up to 30 s
      timeout: 10s               # deadline of one attempt (connect + send + broker ack, acks=all)
      max_pending: 64            # copies in progress at once; a further poison record waits for a free slot

The copy keeps the record's key, value and headers and adds the headers ``evald.error`` (the reason, at most 1000
bytes), ``evald.source.topic``, ``evald.source.partition`` and ``evald.source.offset`` (decimal strings). The
producer is aiokafka's, not idempotent, started lazily on the first poison record (a dead-letter broker that is down
never stops the receiver from starting).

Failure semantics (at least once for poison records too):

* without ``dead_letter`` a poison record's offset is done at once (it is skipped);
* with it, the record stays *in flight* until its copy is acknowledged: the partition keeps being consumed, but its
  committed offset does not move past the poison record, so a crash or rebalance re-reads it and copies it again
  (the dead-letter topic may hold duplicates; dedupe on the ``evald.source.*`` headers);
* a failed attempt is counted (``outcome="failed"``), logged rate-limited and retried after the backoff;
* after ``max_attempts`` failed attempts the record is given up (``outcome="gave_up"``), logged at ERROR with its
  topic/partition/offset, and its offset becomes done, so one broken dead-letter topic never stalls a partition
  forever; the record is still in the source topic (until retention) and can be re-read by offset. With the defaults
  that happens after 2.5 to 4 minutes of continuous failure;
* while ``max_pending`` copies are in progress the fetch loop waits for a free slot (bounded: every copy ends within
  ``max_attempts`` attempts);
* the receiver's shutdown waits for copies in progress like any record in flight (within its budget); then
  ``shutdown()`` cancels those still unfinished (their records stay uncommitted and are re-read) and stops the
  producer.

Self-metrics: ``evald_kafka_poison_records_total{receiver,topic}``,
``evald_kafka_dead_letter_total{receiver,outcome}`` (outcome: ``copied``, ``failed``, ``gave_up``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import Counter
from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.telemetry import RateLimitedLog

if TYPE_CHECKING:
    from evald.receivers.kafka_config import KafkaReceiverConfig

__all__ = ["DeadLetterConfig", "PoisonRecords"]

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)
MAX_BACKOFF = 30.0


class DeadLetterConfig(ComponentConfig):
    topic: str = Field("otlp_spans_dlq", min_length=1, description="Dead-letter topic poison records are copied to.")
    brokers: list[str] | None = Field(
        None, min_length=1, description="Brokers of the dead-letter topic; `null` = the receiver's brokers."
    )
    max_attempts: int = Field(10, ge=1, description="Copy attempts per record before it is given up (and skipped).")
    backoff: Duration = Field(1.0, gt=0, description="Delay after the first failed attempt; doubles up to 30 s.")
    timeout: Duration = Field(10.0, gt=0, description="Deadline of one copy attempt (connect, send, broker ack).")
    max_pending: int = Field(64, ge=1, description="Copies in progress at once; more poison records wait.")


class _Offsets(Protocol):
    def start(self, offset: int) -> None: ...
    def skip(self, offset: int) -> None: ...
    def done(self, offset: int) -> None: ...


class PoisonRecords:
    """Handles the poison records of one receiver (see the module docstring)."""

    def __init__(self, receiver: str, receiver_config: KafkaReceiverConfig, poison: Counter, dead_letter: Counter,
                 on_done: Callable[[], None]) -> None:
        self._id = receiver
        self.config = config = receiver_config.dead_letter
        self._receiver_config = receiver_config
        self._poison = poison
        self._dead_letter = dead_letter
        self._on_done = on_done
        self._producer: Any = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(config.max_pending if config is not None else 1)
        self._lock = asyncio.Lock()  # one lazily started producer

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def handle(self, record: Any, reason: str, offsets: _Offsets) -> None:
        """Count and log ``record``; skip it now, or once its dead-letter copy is acknowledged (or given up)."""
        self._poison.labels(self._id, record.topic).inc()
        logger.warning("%s: poison record %s[%d]@%d: %s", self._id, record.topic, record.partition, record.offset,
                       reason[:500], extra={"component": self._id})
        if self.config is None:
            offsets.skip(record.offset)
            self._on_done()
            return
        offsets.start(record.offset)  # in flight: the committed offset stays below it until the copy is done
        await self._slots.acquire()
        task = asyncio.create_task(self._copy(record, reason, offsets), name=f"{self._id}:dead-letter")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._drop_producer()

    async def _copy(self, record: Any, reason: str, offsets: _Offsets) -> None:
        assert self.config is not None
        cfg = self.config
        headers = [*(record.headers or ()), ("evald.error", reason.encode()[:1000]),
                   ("evald.source.topic", record.topic.encode()),
                   ("evald.source.partition", str(record.partition).encode()),
                   ("evald.source.offset", str(record.offset).encode())]
        delay = cfg.backoff
        try:
            for attempt in range(1, cfg.max_attempts + 1):
                try:
                    producer = await asyncio.wait_for(self._started(), cfg.timeout)
                    await asyncio.wait_for(producer.send_and_wait(cfg.topic, record.value, key=record.key,
                                                                  headers=headers), cfg.timeout)
                except asyncio.CancelledError:
                    raise
                except Exception as err:
                    self._dead_letter.labels(self._id, "failed").inc()
                    _errors.log(logging.WARNING, f"{self._id}:dead-letter:{type(err).__name__}",
                                "%s: copying %s[%d]@%d to the dead-letter topic %s failed (attempt %d of %d): %r",
                                self._id, record.topic, record.partition, record.offset, cfg.topic, attempt,
                                cfg.max_attempts, err)
                    if attempt < cfg.max_attempts:
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, MAX_BACKOFF)
                    continue
                self._dead_letter.labels(self._id, "copied").inc()
                break
            else:
                self._dead_letter.labels(self._id, "gave_up").inc()
                logger.error("%s: gave up copying poison record %s[%d]@%d to %s after %d attempts; skipped (it is "
                             "still in the source topic)", self._id, record.topic, record.partition, record.offset,
                             cfg.topic, cfg.max_attempts, extra={"component": self._id})
            offsets.done(record.offset)
            self._on_done()
        finally:
            self._slots.release()

    async def _started(self) -> Any:
        """The producer, started on first use (one at a time: the lock)."""
        async with self._lock:
            if self._producer is None:
                from evald.receivers.kafka_config import producer_options  # imports this module

                aiokafka = importlib.import_module("aiokafka")  # untyped: used as Any
                producer = aiokafka.AIOKafkaProducer(**producer_options(self._receiver_config))
                try:
                    await producer.start()
                except BaseException:
                    with contextlib.suppress(Exception):
                        await producer.stop()
                    raise
                self._producer = producer
            return self._producer

    async def _drop_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(producer.stop(), 5.0)
