"""The ``kafka`` receiver: consumes the OpenTelemetry Collector's Kafka topics with at-least-once offset commits.

Config keys: see kafka_config.py (``receivers: kafka[/<name>]:``); guide: docs/kafka.md.

Each record is one ``Export{Trace,Logs}ServiceRequest`` (``otlp_proto``/``otlp_json``) and becomes a ``SignalBatch``
whose ``Delivery`` is released once every evaluation derived from it was exported (or dropped and counted). Per
partition the committed offset is the lowest offset still in flight (kafka_offsets.py), so a crash re-reads all
that was not fully evaluated: at-least-once; duplicates are expected (evaluation identities are deterministic).

Failure semantics:

* poison record (undecodable, wrong encoding, tombstone, larger than ``max_record_size``, or refused by the window
  with ``PermanentError``): counted, logged once with its topic/partition/offset and skipped; with ``dead_letter``
  it is first copied to the dead-letter topic and its offset is done only once the copy is acknowledged or given up
  (kafka_dlq.py); the partition goes on either way;
* a record larger than the window can ever hold goes on in parts that fit (``TraceWindow.split``), each as below;
* window full (``QueueFullError``): every assigned partition is paused, the record is retried after ``backoff`` (or
  the window's hint) while the consumer keeps polling (so it stays in the group), and the partitions resume once it
  is accepted; at most one fetched batch is held, never an unbounded buffer;
* rebalance: on revocation the done offsets of the revoked partitions are committed and the rest forgotten (the
  next owner re-reads them; the window still evaluates what it holds, so those traces may be scored twice); on
  assignment bookkeeping starts clean from the committed offsets, except that a re-read record still being
  evaluated here from an earlier assignment is not handed on again and is done when that evaluation is;
* ``shutdown(timeout)``: stop fetching, wait up to ``timeout`` for in-flight records, commit what is done, close.

Self-metrics: ``evald_kafka_*`` (kafka_config.kafka_metrics, kafka_lag.py, kafka_dlq.py; docs/kafka.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import time
from collections.abc import Callable
from typing import Any

from evald.aio import being_cancelled
from evald.errors import MissingExtraError, PermanentError, QueueFullError
from evald.interfaces import TraceConsumer
from evald.model import Delivery, SignalBatch
from evald.receivers.convert import Converted
from evald.receivers.ingest import OFFLOAD_BYTES, decode_logs, decode_traces
from evald.receivers.kafka_config import ENCODINGS, KafkaReceiverConfig, consumer_options, kafka_metrics
from evald.receivers.kafka_dlq import PoisonRecords
from evald.receivers.kafka_lag import ConsumerLag
from evald.receivers.kafka_offsets import PartitionOffsets
from evald.receivers.kafka_positions import RebalanceListener, rewind_beyond_end
from evald.telemetry import RateLimitedLog, Telemetry

__all__ = ["KafkaReceiver", "KafkaReceiverConfig", "build_kafka_receivers"]

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)


class KafkaReceiver:
    """A ``Source`` consuming OTLP records from Kafka in a consumer group (see the module docstring)."""

    def __init__(self, config: KafkaReceiverConfig, telemetry: Telemetry, *, component_id: str = "kafka") -> None:
        self.id = component_id
        self.config = config
        self._tm = telemetry
        self._metrics = kafka_metrics(telemetry)
        self._consumer: Any = None
        self._next: TraceConsumer | None = None
        self._offsets: dict[Any, PartitionOffsets] = {}  # TopicPartition -> bookkeeping of its current assignment
        self._revoked: dict[Any, PartitionOffsets] = {}  # TopicPartition -> an earlier assignment with work in flight
        self._topics = config.topics  # topic -> (signal, its config)
        m = self._metrics
        self._dead = PoisonRecords(component_id, config, m.poison, m.dead_letter, self._changed)
        self._lag = ConsumerLag(component_id, m.lag, m.assigned, config.commit_interval)
        self._fetch_task: asyncio.Task[None] | None = None
        self._commit_task: asyncio.Task[None] | None = None
        self._dirty = asyncio.Event()  # an offset became done: commit soon
        self._progress = asyncio.Event()  # same, for shutdown's wait
        self._paused = False
        self._closed = False

    @property
    def assignment(self) -> frozenset[tuple[str, int]]:
        """The (topic, partition) pairs this receiver owns now."""
        return frozenset((tp.topic, tp.partition) for tp in self._offsets)

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self, next_consumer: TraceConsumer) -> None:
        if self._consumer is not None or self._closed:
            return
        try:
            aiokafka = importlib.import_module("aiokafka")  # untyped: used as Any
        except ImportError as err:
            raise MissingExtraError("kafka") from err
        aiokafka.ConsumerRebalanceListener.register(RebalanceListener)  # aiokafka checks isinstance
        self._next = next_consumer
        consumer = aiokafka.AIOKafkaConsumer(**consumer_options(self.config))
        try:
            await consumer.start()  # fails fast (KafkaConnectionError) when no broker answers
        except BaseException:
            await consumer.stop()
            raise
        consumer.subscribe(topics=list(self._topics), listener=RebalanceListener(self))
        self._consumer = consumer
        self._fetch_task = asyncio.create_task(self._fetch_loop(), name=f"{self.id}:fetch")
        self._commit_task = asyncio.create_task(self._commit_loop(), name=f"{self.id}:commit")
        self._lag.start(consumer, lambda: self._offsets, lambda: self._paused)
        logger.info("kafka receiver consuming %s from %s as group %s", ", ".join(self._topics),
                    ",".join(self.config.brokers), self.config.group_id, extra={"component": self.id})

    async def shutdown(self, timeout: float) -> None:
        """Stop fetching, wait for in-flight records, commit what is done, close: all within ``timeout``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        consumer = self._consumer
        if consumer is None:
            return
        deadline = time.monotonic() + max(0.0, timeout)
        for task in (self._fetch_task, self._commit_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self._lag.stop()
        with contextlib.suppress(Exception):
            consumer.pause(*consumer.assignment())
        while any(p.in_flight for p in self._offsets.values()) and (wait := deadline - time.monotonic()) > 0:
            self._progress.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._progress.wait(), wait)
        left = sum(p.in_flight for p in self._offsets.values())
        if left:
            logger.info("kafka receiver stopping with %d records in flight; they stay uncommitted and are re-read "
                        "by the next consumer", left, extra={"component": self.id})
        await self.commit(timeout=max(0.1, deadline - time.monotonic()))  # broker down: counted as failed
        await self._dead.shutdown()  # copies still in progress stay uncommitted
        for p in self._offsets.values():
            p.revoked = True
        self._metrics.paused.labels(self.id).set(0)
        with contextlib.suppress(Exception):  # bounded: leaving the group must not hang while the broker is down
            await asyncio.wait_for(consumer.stop(), max(1.0, deadline - time.monotonic()))

    async def commit(self, partitions: Any = None, timeout: float | None = None) -> None:
        """Commit the done offsets of ``partitions`` (default: all assigned) that advanced, within ``timeout``."""
        consumer = self._consumer
        if consumer is None:
            return
        chosen = self._offsets if partitions is None else {tp: self._offsets[tp] for tp in partitions
                                                          if tp in self._offsets}
        offsets = {tp: o for tp, p in chosen.items() if not p.revoked and (o := p.committable()) is not None}
        if not offsets:
            return
        try:
            await asyncio.wait_for(consumer.commit(offsets), timeout or self.config.session_timeout)
        except (Exception, asyncio.CancelledError) as err:  # rebalance, broker down, ...: retried later
            if isinstance(err, asyncio.CancelledError) and being_cancelled():
                raise  # the receiver is stopping; any other cancellation is aiokafka's own future, mid-rejoin
            self._metrics.commits.labels(self.id, "failed").inc()
            self._dirty.set()
            _errors.log(logging.WARNING, f"{self.id}:commit:{type(err).__name__}", "%s: offset commit failed: %r",
                        self.id, err)
            return
        self._metrics.commits.labels(self.id, "success").inc()
        for tp, offset in offsets.items():
            chosen[tp].committed = offset

    async def _commit_loop(self) -> None:
        while True:  # until the receiver stops: a commit that fails in any way is retried with the next one
            await self._dirty.wait()
            await asyncio.sleep(self.config.commit_interval)
            self._dirty.clear()
            try:
                await self.commit()
            except Exception:  # a bookkeeping bug must not stop every later commit
                logger.exception("%s: offset commit failed (retried)", self.id)
                self._dirty.set()

    async def _fetch_loop(self) -> None:
        consumer = self._consumer
        while True:
            try:
                batches = await consumer.getmany(timeout_ms=500, max_records=500)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                _errors.log(logging.WARNING, f"{self.id}:fetch:{type(err).__name__}", "%s: fetch failed: %r",
                            self.id, err)
                await asyncio.sleep(self.config.backoff)
                continue
            for tp, records in batches.items():
                offsets = self._offsets.get(tp)
                for record in records:
                    if offsets is None or offsets.revoked or self._offsets.get(tp) is not offsets:
                        break  # revoked meanwhile: the next owner (or our new assignment) re-reads it
                    if (earlier := self._revoked.get(tp)) is None or not earlier.adopt(record.offset, offsets):
                        await self._handle(offsets, record)
                    await asyncio.sleep(0)  # between records the pipeline, heartbeats and admin server run

    async def _handle(self, offsets: PartitionOffsets, record: Any) -> None:
        found = self._topics.get(record.topic)
        self._metrics.records.labels(self.id, record.topic).inc()
        value = record.value
        if found is None or value is None or len(value) > self.config.max_record_size:
            why = "no value" if value is None else f"{len(value)} bytes, over max_record_size" if found else "topic"
            await self._dead.handle(record, why, offsets)
            return
        signal, topic_cfg = found
        encoding = ENCODINGS[topic_cfg.encoding]
        decode: Callable[[bytes, Any], Converted[Any]] = decode_traces if signal == "traces" else decode_logs
        try:
            if len(value) > OFFLOAD_BYTES:
                converted = await asyncio.to_thread(decode, value, encoding)
            else:
                converted = decode(value, encoding)
        except Exception as err:  # MalformedRequest (or a decoder bug): skip it, never block the partition
            await self._dead.handle(record, str(err) or repr(err), offsets)
            return
        refused = self._tm.refused_spans if signal == "traces" else self._tm.refused_logs
        for reason, n in converted.rejected.items():
            refused.labels(self.id, "kafka", reason).inc(n)
        if not converted.records:
            offsets.skip(record.offset)
            self._dirty.set()
            return
        await self._deliver(offsets, record, signal, converted)

    async def _deliver(self, offsets: PartitionOffsets, record: Any, signal: str, converted: Converted[Any]) -> None:
        assert self._next is not None
        offset = record.offset

        def on_done() -> None:
            offsets.done(offset)
            self._changed()

        delivery = Delivery(on_done)
        if signal == "traces":
            batch = SignalBatch(spans=tuple(converted.records), delivery=delivery, source=self.id)
        else:
            batch = SignalBatch(logs=tuple(converted.records), delivery=delivery, source=self.id)
        rejected = 0
        for part in self._next.split(batch):  # a record larger than the window can hold: in parts that fit
            while True:
                try:
                    result = self._next.consume(part)
                except QueueFullError as err:
                    if not await self._wait_for_room(err.retry_after, offsets):
                        return  # revoked or stopping: left uncommitted, re-read later
                    continue
                except PermanentError as err:
                    await self._dead.handle(record, f"refused by the window: {err}", offsets)
                    return
                except Exception as err:
                    _errors.log(logging.ERROR, f"{self.id}:consume:{type(err).__name__}",
                                "%s: unexpected error handing %s[%d]@%d on, skipped: %r", self.id, record.topic,
                                record.partition, offset, err)
                    offsets.skip(offset)
                    self._dirty.set()
                    return
                break
            rejected += result.rejected_spans if signal == "traces" else result.rejected_logs
        self._resume()
        offsets.start(offset)
        (self._tm.refused_spans if signal == "traces" else self._tm.refused_logs).labels(
            self.id, "kafka", "consumer_rejected").inc(rejected)
        counter = self._tm.accepted_spans if signal == "traces" else self._tm.accepted_logs
        counter.labels(self.id, "kafka").inc(len(converted.records) - rejected)
        delivery.seal()

    async def _wait_for_room(self, retry_after: float, offsets: PartitionOffsets) -> bool:
        """Pause every partition and keep polling (to stay in the group) for a while; False if revoked/closing."""
        consumer = self._consumer
        assigned = consumer.assignment()
        consumer.pause(*assigned)
        if not self._paused:
            self._paused = True
            self._metrics.paused.labels(self.id).set(len(assigned))
            logger.info("kafka receiver paused %d partitions: the assembly window is full", len(assigned),
                        extra={"component": self.id})
        delay = max(self.config.backoff, min(retry_after, 5.0))
        stray = await consumer.getmany(timeout_ms=int(delay * 1000))
        for tp, records in stray.items():  # fetched before the pause took effect: read them again later
            if records:
                consumer.seek(tp, records[0].offset)
        return not offsets.revoked and not self._closed

    def _resume(self) -> None:
        if self._paused:
            self._paused = False
            self._consumer.resume(*self._consumer.assignment())
            self._metrics.paused.labels(self.id).set(0)

    def _changed(self) -> None:
        """An offset became done: commit soon (and wake shutdown's wait)."""
        self._dirty.set()
        self._progress.set()

    # -- rebalances (called by aiokafka's ConsumerRebalanceListener) -------------------------------------------

    async def on_revoked(self, revoked: Any) -> None:
        self._metrics.rebalances.labels(self.id, "revoked").inc()
        await self.commit([tp for tp in revoked if tp in self._offsets])
        for tp in revoked:
            offsets = self._offsets.pop(tp, None)
            if offsets is not None:
                offsets.revoked = True
                if offsets.in_flight:
                    self._revoked[tp] = offsets
        self._lag.assigned(len(self._offsets), revoked)
        self._paused = False
        self._metrics.paused.labels(self.id).set(0)

    async def on_assigned(self, assigned: Any) -> None:
        """New partitions; before fetching, committed offsets beyond the log end are reset
        (evald/receivers/kafka_positions.py), and only then are the partitions reported assigned."""
        self._metrics.rebalances.labels(self.id, "assigned").inc()
        self._revoked = {tp: p for tp, p in self._revoked.items() if p.in_flight}
        for tp in assigned:
            if (old := self._offsets.get(tp)) is not None:
                old.revoked = True
            self._offsets[tp] = PartitionOffsets()
        for tp in await rewind_beyond_end(self._consumer, assigned, self.config.initial_offset,
                                          max(10.0, self.config.session_timeout), self.id):
            self._revoked.pop(tp, None)  # a new log reuses offsets: the old assignment's in-flight ones are not these
        self._lag.assigned(len(self._offsets))


def build_kafka_receivers(config: KafkaReceiverConfig, telemetry: Telemetry, component_id: str = "kafka") -> list[Any]:
    return [KafkaReceiver(config, telemetry, component_id=component_id)]
