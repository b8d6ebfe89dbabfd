"""The intake of the shared sending helper: admits items into its buffer, waits for room or drops when full.

:class:`Intake` is the producer side of :class:`~evald.exporters.sending.SendingQueue`. ``put(items, ack)`` admits
items in order; when the buffer is full (``sending_queue.queue_size`` items waiting, or a persistent queue's
``storage.max_megabytes`` on disk) it waits until a consumer takes or finishes a batch (``block_on_overflow``, the
default) or drops the rest as ``queue_full``. Producers waiting for room are served in arrival order. An item over
the exporter's size limit is dropped as ``permanent_error``; items not admitted because the exporter is closing,
or because the waiting caller was cancelled, as ``shutdown``. A persistent queue that cannot be written (disk
full, I/O error) is logged (rate-limited) and, with ``block_on_overflow``, retried every second like a full queue
(the pipeline waits); without it the chunk is dropped as ``queue_full``. ``submit`` is the non-waiting form
(in-memory buffer only). Configured by ``sending_queue`` (evald/exporters/sending_policy.py); it cannot fail otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from evald.exporters.sending_buffer import Ack, Buffer, Entry, MemoryBuffer
from evald.exporters.sending_policy import SendingQueueConfig
from evald.telemetry import RateLimitedLog

__all__ = ["Intake"]

T = TypeVar("T")
logger = logging.getLogger(__name__)
_STORE_RETRY = 1.0  # seconds between attempts to write a persistent queue that failed


class Intake(Generic[T]):
    """Admission into a sending buffer (module docstring). ``drop(reason, count, why)`` counts what is refused;
    ``added(n)`` is called after items were admitted; :meth:`room_made` after a consumer freed room."""

    def __init__(self, buffer: Buffer[T], config: SendingQueueConfig, *, size_of: Callable[[T], int],
                 max_item: int | None, drop: Callable[[str, int, str], None], added: Callable[[int], None]) -> None:
        self._buffer = buffer
        self._cfg = config
        self._size_of = size_of
        self._max_item = max_item
        self._max_stored = None if config.storage is None else int(config.storage.max_megabytes * 1024 * 1024)
        self._drop = drop
        self._added = added
        self._room = asyncio.Event()
        self._lock = asyncio.Lock()  # producers waiting for room enter in order
        self.closing = False
        self._log = RateLimitedLog(logger)

    def room_made(self) -> None:
        self._room.set()

    def close(self) -> None:
        """Stop admitting; producers waiting for room give up (their items count as ``shutdown``)."""
        self.closing = True
        self._room.set()

    def _entries(self, items: Sequence[T], ack: Ack | None) -> list[Entry[T]]:
        entries, too_big = [], 0
        for item in items:
            size = self._size_of(item)
            if self._max_item is not None and size > self._max_item:
                too_big += 1
            else:
                entries.append(Entry(item, size, ack))
        if too_big:
            self._drop("permanent_error", too_big, f"item larger than {self._max_item} bytes")
        return entries

    def _fitting(self, entries: Sequence[Entry[T]]) -> int:
        """How many of ``entries`` (from the front) fit in the buffer now."""
        n = min(len(entries), max(0, self._cfg.queue_size - self._buffer.count))
        if self._max_stored is not None:
            room, fit = self._max_stored - self._buffer.nbytes, 0
            while fit < n and entries[fit].size <= room:
                room -= entries[fit].size
                fit += 1
            n = fit
        return n

    def submit(self, items: Sequence[T], ack: Ack | None = None) -> int:
        """Admit ``items`` without waiting (in-memory buffer only); the rest are dropped as ``queue_full``."""
        if not items:
            return 0
        if self.closing:
            self._drop("shutdown", len(items), "exporter is shutting down")
            return 0
        if not isinstance(self._buffer, MemoryBuffer):
            raise TypeError("submit() is for the in-memory queue; use put()")
        entries = self._entries(items, ack)
        accepted = self._fitting(entries)
        self._buffer.add_nowait(entries[:accepted])
        if len(entries) > accepted:
            self._drop("queue_full", len(entries) - accepted, f"sending queue full ({self._cfg.queue_size})")
        if accepted:
            self._added(accepted)
        return accepted

    async def put(self, items: Sequence[T], ack: Ack | None = None) -> int:
        """Admit ``items``, waiting for room while full if ``block_on_overflow`` (else the rest are dropped as
        ``queue_full``); returns how many were admitted."""
        entries = self._entries(items, ack) if items else []
        done, reason = 0, "queue_full"
        try:
            async with self._lock:
                while done < len(entries) and not self.closing:
                    n = self._fitting(entries[done:])
                    if n == 0:
                        if not self._cfg.block_on_overflow:
                            break
                        self._room.clear()
                        await self._room.wait()
                        continue
                    if not await self._add(entries[done:done + n]):
                        if not self._cfg.block_on_overflow:
                            break
                        await self._pause(_STORE_RETRY)
                        continue
                    done += n
                    self._added(n)
        except asyncio.CancelledError:
            reason = "shutdown"
            raise
        finally:
            if self.closing:
                reason = "shutdown"
            if done < len(entries):
                self._drop(reason, len(entries) - done, "exporter is shutting down" if reason == "shutdown"
                           else f"sending queue full ({self._cfg.queue_size})")
        return done

    async def _add(self, entries: Sequence[Entry[T]]) -> bool:
        """Add to the buffer; False (logged) when a persistent queue cannot be written (disk full, I/O error)."""
        try:
            await self._buffer.add(entries)
        except Exception as err:  # the chunk is one transaction: nothing of it was stored
            self._log.log(logging.ERROR, "store", "cannot write the persistent sending queue (%s: %s); %s",
                          type(err).__name__, err, "waiting for it" if self._cfg.block_on_overflow else "dropping")
            return False
        return True

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` or until the exporter closes."""
        self._room.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while not self.closing:
                    await self._room.wait()
                    self._room.clear()
