"""Receiver write-ahead log: what an OTLP receiver acknowledged survives ``kill -9`` of the process.

Config (``receivers.otlp.wal``; opt-in, absent = no log)::

    receivers:
      otlp:
        wal:
          directory: /var/lib/evald/wal   # one sqlite file per receiver: <receiver id, / as _>.wal.sqlite
          max_megabytes: 256              # request bodies on disk (and being written); full -> retry hint
          fsync: true                     # false: survives a killed process, not a power loss

The Collector has no receiver WAL (its ``sending_queue.storage`` covers exporters only; the Prometheus remote-write
exporter's ``wal.directory`` is the nearest key), so the keys follow evald's own ``sending_queue.storage``
(``directory``, ``max_megabytes``) plus ``fsync``.

Write: an accepted OTLP request (after the assembly window took it, ``Ingestor.ingest_body``) is appended as one
row holding its decoded body as received (protobuf or JSON: no re-encoding), and the receiver answers only once
the row is committed (``ConsumeResult.durable``; concurrent requests share one commit). The batch handed to the
window carries a ``Delivery`` whose ``on_done`` deletes the row: every trace built from it was scored and exported,
or persisted by every exporter (``sending_queue.storage``), or dropped and counted. Start: rows left by an earlier
process are replayed into the window, in order, before the receivers open (``replay``), so the restarted evald
scores and exports them; at-least-once: what the dead process had already exported may be exported again (the
window de-duplicates span ids only within a process; Langfuse upserts on the score id).

Shutdown: deletes continue while the pipeline drains and stop (``freeze``) just before its deadline, at the latest
when the exporters start their final flush (which drops at once what cannot be sent in time), so cases the shutdown
drops (counted ``shutdown``) and scores the exporters give up at shutdown stay in the log and are replayed by the
next start; what was delivered after the freeze (during the exporters' flush) may be delivered again.

Bounds and failure semantics: ``max_megabytes`` of bodies, written or being written (a single larger body is
taken alone when the log is empty, never refused forever); beyond it requests are refused before decoding with
``QueueFullError`` (UNAVAILABLE + RetryInfo / 503 + Retry-After; ``evald_receiver_requests_total{outcome=
"wal_full"}``), never dropped. A failed write fails the request the same way (``not_durable``). A directory that
cannot be written or a file held by another process fails startup (``OSError`` naming the key); an unreadable file
is moved aside (``*.corrupt-<time>``) and logged; a row that no longer decodes is deleted and counted
(``evald_receiver_wal_dropped_requests_total{reason="undecodable"}``). Every sqlite call runs on one worker
thread, never on the event loop. Series: ``evald_receiver_wal_requests`` / ``..._bytes`` (gauges: rows and bytes
held), ``evald_receiver_wal_replayed_requests_total``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import Field

from evald.config.base import ComponentConfig
from evald.errors import QueueFullError
from evald.model import Delivery
from evald.sqlite_store import open_hint, open_store, store_path
from evald.telemetry import RateLimitedLog, Telemetry, shared_instruments

__all__ = ["ReceiverWal", "ReceiverWalConfig", "WalEntry", "wal_file"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MIB = 1024 * 1024
_SCHEMA = ("CREATE TABLE IF NOT EXISTS wal (id INTEGER PRIMARY KEY, signal TEXT NOT NULL, encoding TEXT NOT NULL, "
           "body BLOB NOT NULL)")
_TOTALS = "SELECT count(*), coalesce(sum(length(body)), 0), coalesce(max(id), 0) FROM wal"
#: Retry hint when the log is full (its rows leave as traces are exported) or a write failed.
FULL_RETRY_AFTER = 1.0


class ReceiverWalConfig(ComponentConfig):
    directory: str = Field(description="Directory of the log's sqlite file (created if missing; one evald per file).")
    max_megabytes: int = Field(256, gt=0, description="Request bodies held, in MiB; beyond it requests get a retry "
                               "hint (UNAVAILABLE / 503).")
    fsync: bool = Field(True, description="fsync each commit before answering (sqlite synchronous=FULL); false "
                        "survives a killed process but not a power loss (synchronous=NORMAL).")


def wal_file(directory: str, receiver_id: str) -> Path:
    return store_path(directory, receiver_id, ".wal.sqlite")


def _instruments(registry: CollectorRegistry) -> tuple[Gauge, Gauge, Counter, Counter]:
    return (
        Gauge("evald_receiver_wal_requests", "Requests held in a receiver's write-ahead log.", ["receiver"],
              registry=registry),
        Gauge("evald_receiver_wal_bytes", "Bytes of request bodies held in a receiver's write-ahead log.",
              ["receiver"], registry=registry),
        Counter("evald_receiver_wal_replayed_requests", "Requests replayed from the write-ahead log at start.",
                ["receiver"], registry=registry),
        Counter("evald_receiver_wal_dropped_requests", "Rows of the write-ahead log deleted without replay, by "
                "reason.", ["receiver", "reason"], registry=registry),
    )


@dataclass(slots=True)
class WalEntry:
    """One request's row: its id, its reserved bytes and the ``Delivery`` whose completion deletes it."""

    row: int
    size: int
    delivery: Delivery


@dataclass(slots=True)
class _Insert:
    row: int
    signal: str
    encoding: str
    body: bytes
    done: asyncio.Future[None]


class ReceiverWal:
    """The write-ahead log of one receiver component (shared by its gRPC and HTTP transports)."""

    def __init__(self, config: ReceiverWalConfig, receiver_id: str, telemetry: Telemetry) -> None:
        self.config = config
        self.receiver_id = receiver_id
        self.path = wal_file(config.directory, receiver_id)
        self._max_bytes = config.max_megabytes * MIB
        self._db: sqlite3.Connection | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"evald-wal-{receiver_id}")
        self._next_row = 1
        self._rows = 0
        self._bytes = 0  # bodies on disk or reserved for a write in progress
        self._inserts: list[_Insert] = []
        self._deletes: list[int] = []
        self._writer: asyncio.Task[None] | None = None
        self._frozen = False
        self._replay_end = 0
        self._log = RateLimitedLog(logger)
        rows, size, self._replayed, self._dropped = shared_instruments(telemetry.registry, _instruments)
        self._rows_gauge, self._bytes_gauge = rows.labels(receiver_id), size.labels(receiver_id)

    @property
    def rows(self) -> int:
        return self._rows

    @property
    def nbytes(self) -> int:
        return self._bytes

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    # -- open -----------------------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Open (or create) the file; ``OSError`` naming the key when it cannot be written or is locked."""
        if self._db is not None:
            return
        try:
            rows, size, last = await self._run(self._open)
        except (OSError, sqlite3.Error) as err:
            raise OSError(f"receiver {self.receiver_id}: wal: cannot open {self.path} ({err}{open_hint(err)})") from err
        self._rows, self._bytes, self._next_row = rows, size, last + 1
        self._gauges()
        if rows:
            logger.info("receiver WAL %s: %d request(s) (%.1f MiB) from an earlier run will be replayed", self.path,
                        rows, size / MIB)

    def _open(self) -> tuple[int, int, int]:
        self._db, (rows, size, last) = open_store(self.path, schema=_SCHEMA, totals=_TOTALS, fsync=self.config.fsync,
                                                  label="receiver WAL")
        return int(rows), int(size), int(last)

    # -- write ----------------------------------------------------------------------------------------------------

    def admit(self, size: int) -> WalEntry:
        """Reserve room for a body of ``size`` bytes; ``QueueFullError`` when the log is full. The entry's delivery
        is sealed by ``append`` once the row is written (or the write failed); ``abandon`` if not appended."""
        if self._bytes and self._bytes + size > self._max_bytes:
            raise QueueFullError(f"receiver write-ahead log is full ({self._bytes / MIB:.1f} of "
                                 f"{self.config.max_megabytes} MiB)", retry_after=FULL_RETRY_AFTER)
        row = self._next_row
        self._next_row += 1
        self._bytes += size
        return WalEntry(row, size, Delivery(lambda: self._delete(row, size)))

    def abandon(self, entry: WalEntry) -> None:
        """The request was refused after ``admit``: give its room back (nothing was written)."""
        self._bytes -= entry.size

    def append(self, entry: WalEntry, signal: str, encoding: str, body: bytes) -> asyncio.Future[None]:
        """Write the row (batched with concurrent requests into one commit); the future completes once it is
        committed, or fails with ``QueueFullError`` when the write failed."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.add_done_callback(lambda _: entry.delivery.seal())
        self._inserts.append(_Insert(entry.row, signal, encoding, body, done))
        self._kick()
        return done

    def _delete(self, row: int, size: int) -> None:
        self._bytes -= size
        if self._frozen:
            return  # the row stays: the next start replays it
        self._deletes.append(row)
        self._kick()

    def freeze(self) -> None:
        """Stop deleting rows (at the end of the shutdown drain): what is still held is replayed by the next start."""
        self._frozen = True
        self._deletes.clear()

    def _kick(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop(), name=f"evald:wal:{self.receiver_id}")

    async def _write_loop(self) -> None:
        while self._inserts or self._deletes:
            inserts, self._inserts = self._inserts, []
            deletes, self._deletes = self._deletes, []
            try:
                deleted = await self._run(functools.partial(self._commit, inserts, deletes))
            except Exception as err:  # noqa: BLE001 - the requests fail (retryable); the rows deleted stay
                self._log.log(logging.ERROR, f"write:{type(err).__name__}", "receiver WAL %s: cannot write (%s)",
                              self.path, err)
                for ins in inserts:  # their deliveries still complete and give the room back
                    if not ins.done.done():
                        ins.done.set_exception(QueueFullError(f"receiver write-ahead log cannot write: {err}",
                                                              retry_after=FULL_RETRY_AFTER))
                continue
            self._rows += len(inserts) - deleted
            self._gauges()
            for ins in inserts:
                if not ins.done.done():
                    ins.done.set_result(None)

    def _commit(self, inserts: list[_Insert], deletes: list[int]) -> int:
        db = self._db
        if db is None:
            raise sqlite3.ProgrammingError("the write-ahead log is closed")
        with db:  # one transaction, fsync'ed at commit with synchronous=FULL
            db.execute("BEGIN")
            if inserts:
                db.executemany("INSERT INTO wal (id, signal, encoding, body) VALUES (?, ?, ?, ?)",
                               [(i.row, i.signal, i.encoding, i.body) for i in inserts])
            if not deletes:
                return 0
            return max(0, db.executemany("DELETE FROM wal WHERE id = ?", [(r,) for r in deletes]).rowcount)

    def _gauges(self) -> None:
        self._rows_gauge.set(self._rows)
        self._bytes_gauge.set(max(0, self._bytes))

    # -- read (replay) ----------------------------------------------------------------------------------------------

    def mark_replay(self) -> int:
        """Rows written by an earlier process end here (rows appended from now on are never replayed); returns how
        many requests there are to replay."""
        self._replay_end = self._next_row
        return self._rows

    async def read(self, after: int, limit: int, max_bytes: int = 16 * MIB) -> list[tuple[int, str, str, bytes]]:
        """The earlier process's next rows after id ``after``, oldest first: at most ``limit`` rows and, beyond the
        first, ``max_bytes`` of bodies (replay holds one such chunk at a time)."""
        end = self._replay_end

        def select() -> list[tuple[int, str, str, bytes]]:
            if self._db is None:
                raise sqlite3.ProgrammingError("the write-ahead log is closed")
            sizes = self._db.execute("SELECT id, length(body) FROM wal WHERE id > ? AND id < ? ORDER BY id LIMIT ?",
                                     (after, end, limit)).fetchall()
            last, total = None, 0
            for row, size in sizes:
                if last is not None and total + size > max_bytes:
                    break
                last, total = row, total + size
            if last is None:
                return []
            return self._db.execute("SELECT id, signal, encoding, body FROM wal WHERE id > ? AND id <= ? ORDER BY id",
                                    (after, last)).fetchall()
        return await self._run(select)

    def replay_delivery(self, row: int, size: int) -> Delivery:
        """The delivery of a row being replayed: its completion deletes the row. The caller seals it."""
        return Delivery(lambda: self._delete(row, size))

    def count_replayed(self) -> None:
        """A row was handed over to the window whole (``evald_receiver_wal_replayed_requests_total``)."""
        self._replayed.labels(self.receiver_id).inc()

    def drop_row(self, row: int, size: int, reason: str) -> None:
        """A row that can never be replayed (it does not decode): deleted and counted."""
        self._dropped.labels(self.receiver_id, reason).inc()
        self._delete(row, size)

    async def close(self) -> None:
        """Finish pending writes (deletes too unless frozen) and close the file."""
        writer = self._writer
        if writer is not None:
            try:
                await asyncio.wait_for(asyncio.shield(writer), 2.0)
            except Exception as err:  # noqa: BLE001 - the rows stay; the next start replays them
                logger.warning("receiver WAL %s: pending writes not finished at close (%r)", self.path, err)
        self._frozen = True  # a delivery completing after this leaves its row for the next start
        db, self._db = self._db, None
        if db is not None:
            await self._run(db.close)
        self._thread.shutdown(wait=False)
        if self._rows:
            logger.info("receiver WAL %s: %d request(s) stay in the log and are replayed at the next start",
                        self.path, self._rows)

