"""The one-process sqlite file behind the receiver write-ahead log and the persistent sending queue.

``store_path(directory, component_id, suffix)`` names a component's file. ``open_store(path, ...)`` creates the
directory and the file if missing and opens it for one process (``locking_mode=EXCLUSIVE``), WAL journal,
``synchronous=FULL`` (``NORMAL`` without ``fsync``), creates the table and returns the connection with the row of
``totals`` (a query over what the file already holds). ``open_hint(err)`` is the hint the callers add to the
startup error of a locked file. No configuration keys of its own.

Failure semantics: a file another process holds, or a directory that cannot be written, raises
``sqlite3.OperationalError`` (a startup error for the caller); a file that is not a readable database is renamed
``*.corrupt-<time>`` (with its ``-wal``/``-shm`` parts), logged, and a new one is started. Called on the owner's
worker thread only (the connection is then used from that thread).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["open_hint", "open_store", "store_path"]

logger = logging.getLogger(__name__)


def store_path(directory: str, component_id: str, suffix: str) -> Path:
    """``{directory}/{component id, other than [alnum-_.] -> '_'}{suffix}``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in component_id)
    return Path(directory) / f"{safe}{suffix}"


def open_hint(err: BaseException) -> str:
    """The hint for an open that failed because another process holds the file."""
    return "; is another evald using this directory?" if "locked" in str(err) else ""


def open_store(path: Path, *, schema: str, totals: str, fsync: bool,
               label: str) -> tuple[sqlite3.Connection, tuple[Any, ...]]:
    """``(connection, totals row)``; ``label`` names the store in the log line of a corrupt file (module docstring)."""
    try:
        return _connect(path, schema, totals, fsync)
    except sqlite3.OperationalError:
        raise  # locked by another process, or not writable
    except sqlite3.DatabaseError as err:
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        logger.error("%s %s is unreadable (%s); moved to %s, starting an empty one", label, path, err, aside)
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{path}{suffix}")
            if part.exists():
                part.rename(Path(f"{aside}{suffix}"))
        return _connect(path, schema, totals, fsync)


def _connect(path: Path, schema: str, totals: str, fsync: bool) -> tuple[sqlite3.Connection, tuple[Any, ...]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=1.0, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA locking_mode=EXCLUSIVE")  # one evald process per file
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        db.execute(schema)
        row = tuple(db.execute(totals).fetchone())
    except BaseException:
        db.close()
        raise
    return db, row
