"""Replay of a receiver's write-ahead log at start (evald/receivers/wal.py): the earlier process's rows into the window.

``replay_wal(wal, consumer)`` runs after the pipeline and the assembly window started and before the receivers
open (evald/service.py). Each row is decoded as the receivers decode a request (``decode_traces`` /
``decode_logs``; a body over 1 MiB in a worker thread) and handed to ``consumer`` in order, with a ``Delivery``
whose completion deletes the row, in parts that fit an empty window (``consumer.split``). A row counts as replayed
(``evald_receiver_wal_replayed_requests_total``) once all of it was handed over. No configuration keys.

Failure semantics: a full window (``QueueFullError``) is waited out (its retry hint, at most 1 s at a time) while the
pipeline releases traces, so replay never drops for lack of room; it ends early only when ``stopping()`` turns true
(the rows left stay for the next start). A row that does not decode, or that the window refuses as permanently bad,
is deleted and counted (``evald_receiver_wal_dropped_requests_total{reason="undecodable"|"permanent_error"}``);
any other error is logged and the row kept for the next start. Reads are chunked (64 rows), so replay holds at
most one chunk of bodies beyond what the window itself holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from evald.errors import PermanentError, QueueFullError
from evald.interfaces import TraceConsumer
from evald.model import SignalBatch
from evald.receivers.ingest import MalformedRequest, Signal, decode_body, signal_batch
from evald.receivers.wal import ReceiverWal

__all__ = ["replay_wal"]

logger = logging.getLogger(__name__)

_CHUNK = 64
_MAX_WAIT = 1.0


async def replay_wal(wal: ReceiverWal, consumer: TraceConsumer, stopping: Callable[[], bool] = lambda: False) -> int:
    """Hand every row of the earlier process to ``consumer``; returns how many requests were replayed."""
    total = wal.mark_replay()
    if not total:
        return 0
    started = time.monotonic()
    after, replayed = 0, 0
    while not stopping():
        rows = await wal.read(after, _CHUNK)
        if not rows:
            break
        for row, signal, encoding, body in rows:
            after = row
            if stopping():
                break
            if await _replay_row(wal, consumer, row, signal, encoding, body, stopping):
                replayed += 1
    logger.info("receiver WAL %s: replayed %d of %d request(s) in %.2fs", wal.path, replayed, total,
                time.monotonic() - started)
    return replayed


async def _replay_row(wal: ReceiverWal, consumer: TraceConsumer, row: int, signal: str, encoding: str, body: bytes,
                      stopping: Callable[[], bool]) -> bool:
    kind: Signal = "traces" if signal == "traces" else "logs"
    try:
        converted = await decode_body(body, "json" if encoding == "json" else "protobuf", kind)
    except (MalformedRequest, ValueError) as err:
        logger.error("receiver WAL %s: row %d does not decode (%s); deleted", wal.path, row, err)
        wal.drop_row(row, len(body), "undecodable")
        return False
    delivery = wal.replay_delivery(row, len(body))
    records = tuple(converted.records)
    batch = signal_batch(kind, records, wal.receiver_id, delivery)
    try:
        for part in consumer.split(batch) if records else []:
            if not await _consume(consumer, part, stopping):
                return False  # stopping: the row stays (its delivery is never sealed)
    except PermanentError as err:
        logger.error("receiver WAL %s: row %d refused by the window (%s); deleted", wal.path, row, err)
        wal.drop_row(row, len(body), "permanent_error")
        return False
    except Exception:  # noqa: BLE001 - kept for the next start
        logger.exception("receiver WAL %s: row %d could not be replayed; kept for the next start", wal.path, row)
        return False
    wal.count_replayed()  # only now: every part was handed over
    delivery.seal()
    return True


async def _consume(consumer: TraceConsumer, batch: SignalBatch, stopping: Callable[[], bool]) -> bool:
    while True:
        try:
            consumer.consume(batch)
            return True
        except QueueFullError as err:
            if stopping():
                return False
            await asyncio.sleep(min(_MAX_WAIT, max(0.01, err.retry_after)))
