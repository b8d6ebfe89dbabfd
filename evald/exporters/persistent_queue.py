"""Persistent sending queue: the shared helper's items in a sqlite3 file, so a restarted evald sends them.

Config (``sending_queue.storage`` of a network exporter; the Collector's ``sending_queue.storage``)::

    sending_queue: { storage: { directory: /var/lib/evald/queue, max_megabytes: 256 } }

One file per exporter, ``{directory}/{exporter id, '/' -> '_'}.sqlite`` (WAL journal, ``synchronous=FULL``): each
accepted chunk of items is one transaction, fsync'ed before ``put`` returns, and that is the acknowledgement the
pipeline passes on to its source. A sent (or permanently dropped) batch is deleted. At start the file's rows are
queued again in their original order, ahead of anything new; they may have been sent already by the process that
died (at-least-once: the network exporters' ids make a resend an upsert, the Kafka exporter's records may repeat).

Bounds: ``queue_size`` items waiting (as in memory) and ``max_megabytes`` of items on disk, in flight included.
Failure semantics: a directory that cannot be written, or a file another process holds (one evald per file),
fails startup with an ``OSError`` naming the exporter and the key. A file that cannot be read (corrupt, wrong
format) is renamed ``*.corrupt-<time>``, logged, and a new one is started, so evald still starts; a row that no
longer decodes (written by an incompatible version) is deleted and logged. A failed write propagates to the
intake, which logs it and retries while the pipeline waits (evald/exporters/sending_intake.py); a failed read is
logged and retried a second later; a failed delete is logged and leaves the rows, which a later start sends again
(at least once). Every sqlite call runs on one worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Generic, TypeVar

from evald.exporters.sending_buffer import Entry, Fit
from evald.exporters.sending_policy import QueueStorageConfig
from evald.sqlite_store import open_hint, open_store, store_path
from evald.telemetry import RateLimitedLog

__all__ = ["SqliteBuffer", "queue_file"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
T2 = TypeVar("T2")
_SCHEMA = "CREATE TABLE IF NOT EXISTS queue (id INTEGER PRIMARY KEY AUTOINCREMENT, item BLOB NOT NULL)"
_TOTALS = "SELECT count(*), coalesce(sum(length(item)), 0) FROM queue"
_READ_CHUNK = 1000  # rows read per take at most (a batch is smaller)


def queue_file(directory: str, exporter_id: str) -> Path:
    """The sqlite file of one exporter's queue."""
    return store_path(directory, exporter_id, ".sqlite")


class SqliteBuffer(Generic[T]):
    """The shared helper's buffer on disk (module docstring)."""

    durable = True

    def __init__(self, config: QueueStorageConfig, exporter_id: str,
                 codec: tuple[Callable[[T], bytes], Callable[[bytes], T]],
                 size_of: Callable[[T], int]) -> None:
        self.path = queue_file(config.directory, exporter_id)
        self._exporter_id = exporter_id
        self._encode, self._decode = codec
        self._size_of = size_of
        self._db: sqlite3.Connection | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"evald-queue-{exporter_id}")
        self._cursor = 0  # rows with a smaller id were taken by a consumer (in flight or finished)
        self._waiting = 0
        self._stored = 0  # bytes on disk, waiting and in flight
        self._sizes: dict[int, int] = {}  # row id -> stored bytes, for rows taken and not yet deleted
        self._log = RateLimitedLog(logger)
        self._take_lock = asyncio.Lock()

    @property
    def count(self) -> int:
        return self._waiting

    @property
    def nbytes(self) -> int:
        return self._stored

    async def _run(self, fn: Callable[[], T2]) -> T2:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def open(self) -> None:
        if self._db is None:
            try:
                self._waiting, self._stored = await self._run(self._open)
            except (OSError, sqlite3.Error) as err:  # evald run reports an OSError as "cannot start" (exit 1)
                raise OSError(f"exporter {self._exporter_id}: sending_queue.storage: cannot open {self.path} "
                              f"({err}{open_hint(err)})") from err
            self._cursor = 0
            if self._waiting:
                logger.info("persistent queue %s: %d item(s) from an earlier run will be sent", self.path,
                            self._waiting)

    def _open(self) -> tuple[int, int]:
        self._db, (count, size) = open_store(self.path, schema=_SCHEMA, totals=_TOTALS, fsync=True,
                                             label="persistent queue")
        return int(count), int(size)

    async def add(self, entries: Sequence[Entry[T]]) -> None:
        blobs = [self._encode(e.item) for e in entries]
        await self._run(lambda: self._insert(blobs))
        self._waiting += len(blobs)
        self._stored += sum(len(b) for b in blobs)

    def _insert(self, blobs: list[bytes]) -> None:
        assert self._db is not None
        with self._db:  # one transaction, fsync'ed at commit (synchronous=FULL)
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO queue (item) VALUES (?)", [(b,) for b in blobs])

    async def take(self, limit: int, max_bytes: int | None) -> list[Entry[T]]:
        async with self._take_lock:  # consumers take in turn: each reads from where the last one stopped
            return await self._take(limit, max_bytes)

    async def _take(self, limit: int, max_bytes: int | None) -> list[Entry[T]]:
        if not self._waiting:
            return []
        cursor = self._cursor
        try:
            rows = await self._run(lambda: self._select(cursor, min(limit, _READ_CHUNK)))
        except sqlite3.Error as err:
            self._log.log(logging.ERROR, "read", "persistent queue %s: cannot read (%s); retrying", self.path, err)
            await asyncio.sleep(1.0)
            return []
        batch: list[Entry[T]] = []
        bad: list[int] = []
        fit = Fit(max_bytes)
        for key, blob in rows:
            try:
                item = self._decode(blob)
            except Exception:  # written by an incompatible version: it can never be sent
                bad.append(key)
                self._sizes[key] = len(blob)
                continue
            entry = Entry(item, self._size_of(item), None, key)
            if not fit.adds(entry.size, first=not batch):
                break
            batch.append(entry)
            self._sizes[key] = len(blob)
        taken = batch[-1].key if batch else (bad[-1] if bad else -1)
        if bad:
            logger.error("persistent queue %s: %d row(s) do not decode; deleted", self.path, len(bad))
            await self.finish([Entry(None, 0, None, k) for k in bad if k <= taken])  # type: ignore[arg-type]
        if taken >= 0:
            self._cursor = taken + 1
            self._waiting -= len(batch) + sum(1 for k in bad if k <= taken)
        return batch

    def _select(self, cursor: int, limit: int) -> list[tuple[int, bytes]]:
        assert self._db is not None
        return self._db.execute("SELECT id, item FROM queue WHERE id >= ? ORDER BY id LIMIT ?",
                                (cursor, limit)).fetchall()

    async def finish(self, entries: Sequence[Entry[T]]) -> None:
        keys = [e.key for e in entries]
        if not keys:
            return
        try:
            await self._run(lambda: self._delete(keys))
        except sqlite3.Error as err:  # the rows stay: a later start sends them again (at least once)
            self._log.log(logging.ERROR, "delete", "persistent queue %s: cannot delete sent items (%s)", self.path,
                          err)
        self._stored -= sum(self._sizes.pop(k, 0) for k in keys)

    def _delete(self, keys: list[int]) -> None:
        assert self._db is not None
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM queue WHERE id = ?", [(k,) for k in keys])

    async def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await self._run(db.close)
        self._thread.shutdown(wait=False)

