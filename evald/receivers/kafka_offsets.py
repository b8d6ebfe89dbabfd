"""Per-partition offset bookkeeping for the ``kafka`` receiver (pure, no I/O).

A record's offset is *in flight* from when it is handed to the pipeline until its ``Delivery`` is released (every
evaluation derived from it was exported or deliberately dropped). The committable offset of a partition is the
lowest offset still in flight, or one past the highest offset seen when nothing is in flight: Kafka's committed
offset is "the next record to read", so every record below it is done.

A revoked partition's bookkeeping ignores completions, except for offsets that a later assignment of the same
partition re-read while they were still in flight here (:meth:`adopt`): those completions are forwarded, so the
re-read record is done only when the evaluation already in progress is.
"""

from __future__ import annotations

import heapq


class PartitionOffsets:
    """In-flight offsets of one partition during one assignment."""

    __slots__ = ("_heap", "_open", "_next", "_forward", "committed", "revoked", "first")

    def __init__(self) -> None:
        self._heap: list[int] = []  # min-heap of offsets; finished ones are popped lazily
        self._open: set[int] = set()  # offsets in flight
        self._next: int | None = None  # one past the highest offset seen
        self._forward: dict[int, PartitionOffsets] = {}  # offset -> the later assignment that re-read it
        self.committed: int | None = None  # the last offset committed (by this assignment)
        self.revoked = False
        self.first: int | None = None  # the lowest offset seen (where this assignment started reading)

    def start(self, offset: int) -> None:
        """A record was handed on; it is in flight until :meth:`done`."""
        if offset not in self._open:
            self._open.add(offset)
            heapq.heappush(self._heap, offset)
        self._seen(offset)

    def skip(self, offset: int) -> None:
        """A record that needs no acknowledgement (poison, nothing to evaluate): done at once."""
        self._seen(offset)

    def done(self, offset: int) -> None:
        if self.revoked:
            later = self._forward.pop(offset, None)
            self._open.discard(offset)
            if later is not None:
                later.done(offset)
            return
        self._open.discard(offset)
        while self._heap and self._heap[0] not in self._open:
            heapq.heappop(self._heap)

    def adopt(self, offset: int, later: PartitionOffsets) -> bool:
        """(Revoked bookkeeping) a new assignment re-read ``offset``: if it is still in flight here, ``later``
        tracks it as in flight until this evaluation finishes, and the caller must not hand it on again."""
        if offset not in self._open:
            return False
        later.start(offset)
        self._forward[offset] = later
        return True

    @property
    def in_flight(self) -> int:
        return len(self._open)

    def committable(self) -> int | None:
        """The offset to commit now, or None when there is nothing new since the last commit."""
        offset = self._heap[0] if self._heap else self._next
        if offset is None or (self.committed is not None and offset <= self.committed):
            return None
        return offset

    def _seen(self, offset: int) -> None:
        if self.first is None or offset < self.first:
            self.first = offset
        if self._next is None or offset + 1 > self._next:
            self._next = offset + 1
