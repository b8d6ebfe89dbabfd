"""The receiver write-ahead log's sqlite file (evald/receivers/wal.py): opened as the persistent sending queue's is.

``open_log(path, fsync)`` creates the directory and the file if missing and opens it for one process
(``locking_mode=EXCLUSIVE``), WAL journal, ``synchronous=FULL`` (``NORMAL`` without ``fsync``); it returns the
connection and the rows, body bytes and highest row id already there. No configuration keys of its own.

Failure semantics: a file another process holds, or a directory that cannot be written, raises
``sqlite3.OperationalError`` (a startup error for the caller); a file that is not a readable database is renamed
``*.corrupt-<time>`` (with its ``-wal``/``-shm`` parts), logged, and a new one is started. Called on the log's
worker thread only.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

__all__ = ["open_log"]

logger = logging.getLogger(__name__)

_SCHEMA = ("CREATE TABLE IF NOT EXISTS wal (id INTEGER PRIMARY KEY, signal TEXT NOT NULL, encoding TEXT NOT NULL, "
           "body BLOB NOT NULL)")


def open_log(path: Path, fsync: bool) -> tuple[sqlite3.Connection, int, int, int]:
    """``(connection, rows, body bytes, highest id)``; see the module docstring."""
    try:
        return _connect(path, fsync)
    except sqlite3.OperationalError:
        raise  # locked by another process, or not writable
    except sqlite3.DatabaseError as err:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        logger.error("receiver WAL %s is unreadable (%s); moved to %s, starting an empty log", path, err, aside)
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{path}{suffix}")
            if part.exists():
                part.rename(Path(f"{aside}{suffix}"))
        return _connect(path, fsync)


def _connect(path: Path, fsync: bool) -> tuple[sqlite3.Connection, int, int, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=1.0, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA locking_mode=EXCLUSIVE")  # one evald process per file
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        db.execute(_SCHEMA)
        rows, size, last = db.execute(
            "SELECT count(*), coalesce(sum(length(body)), 0), coalesce(max(id), 0) FROM wal").fetchone()
    except BaseException:
        db.close()
        raise
    return db, int(rows), int(size), int(last)
