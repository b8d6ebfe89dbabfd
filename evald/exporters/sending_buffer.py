"""The in-memory buffer of the shared sending helper, and what every buffer of it provides.

A buffer holds the items an exporter has accepted and not yet finished (sent, or dropped and counted).
:class:`MemoryBuffer` keeps them in a deque and ties each one to the acknowledgement (``Ack``) of the pipeline
batch it came from: the ack is held while the item waits or is in flight and released when it is finished, so the
source (the Kafka receiver's commit) learns a batch is done only once every exporter delivered it or dropped it
and counted why. The persistent buffer (evald/exporters/persistent_queue.py) writes items to disk instead and
needs no ack: ``add`` returns once they are fsync'ed, and a restarted evald sends them.

No configuration of its own (``sending_queue`` in evald/exporters/sending_policy.py sizes it); it cannot fail.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["Ack", "Buffer", "Entry", "Fit", "MemoryBuffer", "release"]

T = TypeVar("T")


class Ack(Protocol):
    """What a source's acknowledgement offers (evald.model.Delivery): one hold per unfinished item."""

    def hold(self) -> None: ...

    def release(self) -> None: ...


@dataclass(slots=True)
class Entry(Generic[T]):
    item: T
    size: int
    ack: Ack | None = None  # memory buffer: released when the item is finished
    key: int = 0  # persistent buffer: the row id


class Buffer(Protocol[T]):
    """Items accepted and not yet finished. ``count``/``nbytes`` cover the waiting ones (not those in flight)."""

    durable: bool

    @property
    def count(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    async def open(self) -> None: ...

    async def add(self, entries: Sequence[Entry[T]]) -> None: ...

    async def take(self, limit: int, max_bytes: int | None) -> list[Entry[T]]: ...

    async def finish(self, entries: Sequence[Entry[T]]) -> None: ...

    async def close(self) -> None: ...


class MemoryBuffer(Generic[T]):
    """A deque of entries; holds each entry's ack until :meth:`finish` (module docstring)."""

    durable = False

    def __init__(self) -> None:
        self._entries: deque[Entry[T]] = deque()
        self._bytes = 0

    @property
    def count(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes

    async def open(self) -> None:
        return None

    def add_nowait(self, entries: Sequence[Entry[T]]) -> None:
        for entry in entries:
            if entry.ack is not None:
                entry.ack.hold()
            self._entries.append(entry)
            self._bytes += entry.size

    async def add(self, entries: Sequence[Entry[T]]) -> None:
        self.add_nowait(entries)

    async def take(self, limit: int, max_bytes: int | None) -> list[Entry[T]]:
        batch: list[Entry[T]] = []
        fit = Fit(max_bytes)
        while self._entries and len(batch) < limit and fit.adds(self._entries[0].size, first=not batch):
            entry = self._entries.popleft()
            self._bytes -= entry.size
            batch.append(entry)
        return batch

    async def finish(self, entries: Sequence[Entry[T]]) -> None:
        release(entries)

    def clear(self) -> list[Entry[T]]:
        """Remove and return every waiting entry (shutdown)."""
        left = list(self._entries)
        self._entries.clear()
        self._bytes = 0
        return left

    async def close(self) -> None:
        release(self.clear())


class Fit:
    """Whether one more item still fits a request of at most ``max_bytes`` (a JSON array: brackets and commas)."""

    __slots__ = ("_max", "_size")

    def __init__(self, max_bytes: int | None) -> None:
        self._max = max_bytes
        self._size = 2

    def adds(self, size: int, *, first: bool) -> bool:
        if self._max is None:
            return True
        if not first and self._size + size + 1 > self._max:
            return False
        self._size += size + 1
        return True


def release(entries: Sequence[Entry[T]]) -> None:
    """Release the ack of each entry once (an entry's ack is dropped after its release)."""
    for entry in entries:
        ack, entry.ack = entry.ack, None
        if ack is not None:
            ack.release()
