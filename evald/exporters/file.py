"""File exporter: one JSON line per scored case (the ``evald replay --output`` format) with size-based rotation.

Config keys (``exporters.file[/name]``):
  path            file to append to (parent directories are created)
  max_megabytes   rotate when the file would grow past this size (default 100; 0 = never rotate)
  max_backups     rotated files kept as ``path.1`` (newest) ... ``path.N`` (default 5; 0 = delete on rotation)
  flush_interval  buffered lines are written at least this often (default 1s)
  queue_size      scored cases buffered between writes (default 10000)
  block_on_overflow  a full buffer makes the pipeline wait for the next write (default true) instead of dropping

Line format: ``ScoredCase.to_json_line()`` (docs/replay-format.md), so ``evald`` tooling reads either.

Failure semantics: ``export`` only buffers, and holds the pipeline's acknowledgement (evald/exporters/acks.py)
until the line is written; a full buffer makes ``export`` wait for room (``block_on_overflow``, backpressure up to
the receivers) or drops new cases (``queue_full``). Writes run in a worker thread (``asyncio.to_thread``) every
``flush_interval`` or as soon as a quarter of the buffer is used. A failed write
(disk full, permissions) keeps the lines buffered and is retried at the next flush; a partly written chunk may
then appear twice (at least once). ``shutdown(timeout)`` writes what is buffered within the deadline and counts
the rest as ``shutdown``. The file cannot be opened at ``start()``: startup fails. Counted in scores on
``evald_exporter_sent_scores_total`` / ``evald_exporter_dropped_scores_total`` like the network exporters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.exporters.acks import current_ack
from evald.exporters.sending import exporter_instruments
from evald.model import Delivery, ScoredCase
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)


class FileExporterConfig(ComponentConfig):
    path: str = Field(min_length=1, description="JSON lines file to append to.")
    max_megabytes: float = Field(100.0, ge=0.0, description="Rotate before the file passes this size; 0 = never.")
    max_backups: int = Field(5, ge=0, le=1000, description="Rotated files kept (`path.1` is the newest).")
    flush_interval: Duration = Field(1.0, gt=0, description="Buffered lines are written at least this often.")
    queue_size: int = Field(10_000, gt=0, description="Scored cases buffered between writes.")
    block_on_overflow: bool = Field(
        True, description="A full buffer makes the pipeline wait for the next write instead of dropping new cases."
    )


class RotatingWriter:
    """Appends byte lines to ``path``, rotating on line boundaries before the file passes ``max_bytes``.

    Blocking; used from one thread at a time (the exporter serialises its flushes).
    """

    def __init__(self, path: Path, max_bytes: int, max_backups: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.max_backups = max_backups
        self._fh: BinaryIO | None = None
        self._size = 0

    def open(self) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")  # noqa: SIM115 - closed by close()
            self._size = self._fh.seek(0, os.SEEK_END)

    def write(self, lines: Sequence[bytes]) -> None:
        self.open()
        chunk = bytearray()
        for line in lines:
            if self.max_bytes and self._size + len(chunk) > 0 and self._size + len(chunk) + len(line) > self.max_bytes:
                self._emit(chunk)
                chunk = bytearray()
                self._rotate()
            chunk += line
        self._emit(chunk)

    def _emit(self, chunk: bytearray) -> None:
        assert self._fh is not None
        if chunk:
            self._fh.write(chunk)
            self._fh.flush()
            self._size += len(chunk)

    def _rotate(self) -> None:
        self.close()
        if self.max_backups == 0:
            self.path.unlink(missing_ok=True)
        else:
            for i in range(self.max_backups - 1, 0, -1):
                older = self.path.with_name(f"{self.path.name}.{i}")
                if older.exists():
                    os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
            if self.path.exists():
                os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        self.open()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class FileExporter:
    """Buffers JSON lines and writes them from a worker thread (module docstring)."""

    def __init__(self, config: FileExporterConfig, telemetry: Telemetry, *, component_id: str = "file") -> None:
        self.id = component_id
        self.config = config
        self._writer = RotatingWriter(Path(config.path), int(config.max_megabytes * 1024 * 1024), config.max_backups)
        self._buffer: deque[tuple[bytes, int, Delivery | None]] = deque()  # (line, scores in it, ack held)
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._log = RateLimitedLog(logger)
        m = exporter_instruments(telemetry)
        self._sent = m.sent.labels(component_id)
        self._dropped = m.dropped
        self._size_gauge = m.queue_size.labels(component_id)
        m.queue_capacity.labels(component_id).set(config.queue_size)

    async def start(self) -> None:
        if self._task is None and not self._closed:
            await asyncio.to_thread(self._writer.open)
            self._task = asyncio.create_task(self._run(), name=f"evald:{self.id}:writer")

    @property
    def waits_for_room(self) -> bool:
        """``export`` waits while the buffer is full (``block_on_overflow``): the pipeline sets no deadline."""
        return self.config.block_on_overflow

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Buffer one line per case, holding the pipeline's acknowledgement until it is written (docstring)."""
        ack = current_ack()
        for i, scored in enumerate(batch):
            while len(self._buffer) >= self.config.queue_size and not self._closed:
                if not self.config.block_on_overflow:
                    break
                self._wake.set()
                self._room.clear()
                await self._room.wait()
            if self._closed or len(self._buffer) >= self.config.queue_size:
                rest = batch[i:]
                self._drop("shutdown" if self._closed else "queue_full", sum(len(sc.scores) for sc in rest))
                break
            line = json.dumps(scored.to_json_line(), ensure_ascii=False, default=str) + "\n"
            if ack is not None:
                ack.hold()
            self._buffer.append((line.encode("utf-8"), len(scored.scores), ack))
        self._size_gauge.set(len(self._buffer))
        if len(self._buffer) * 4 >= self.config.queue_size:
            self._wake.set()

    async def _run(self) -> None:
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.config.flush_interval)
            self._wake.clear()
            await self._flush()
        await self._flush()  # the final flush at shutdown

    async def _flush(self) -> None:
        async with self._lock:
            if not self._buffer:
                return
            taken = list(self._buffer)
            try:
                await asyncio.to_thread(self._writer.write, [line for line, _, _ in taken])
            except OSError as err:
                self._log.log(logging.WARNING, f"write:{self.id}", "exporter %s: cannot write %s: %s (will retry)",
                              self.id, self.config.path, err)
                return
            for _ in taken:
                self._buffer.popleft()
            self._room.set()
            self._sent.inc(sum(n for _, n, _ in taken))
            self._size_gauge.set(len(self._buffer))
            for _, _, ack in taken:
                if ack is not None:
                    ack.release()

    async def shutdown(self, timeout: float) -> None:
        """Write what is buffered within ``timeout``; count the rest; close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        self._room.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=max(timeout, 0.0))
            except TimeoutError:  # a write still runs in its thread: leave the file to it, count what is left
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
            else:
                await asyncio.to_thread(self._writer.close)
        left = sum(n for _, n, _ in self._buffer)
        for _, _, ack in self._buffer:
            if ack is not None:
                ack.release()
        self._buffer.clear()
        self._size_gauge.set(0)
        if left:
            self._drop("shutdown", left)

    def _drop(self, reason: str, scores: int) -> None:
        self._dropped.labels(self.id, reason).inc(scores)
        self._log.log(logging.WARNING, f"drop:{self.id}:{reason}", "exporter %s dropped %d score(s): %s",
                      self.id, scores, reason)
