"""The trace ids the assembly window released recently, remembered compactly to tell late and redelivered spans
from the first spans of a new trace.

``ReleasedIds(limit)`` is owned by evald/assembly/window.py; ``limit`` is ``assembly.released_memory``: the last
``limit`` distinct trace ids released are remembered, the oldest forgotten first (a trace released again after a
late span reopened it keeps its place). 0 remembers nothing.

Each id is kept as its ``hash()`` (a 64-bit int) in a set, in release order in a deque, not as the 32-character id
string in an ordered dict: ~85 bytes per id instead of ~170 (tracemalloc, 100,000 ids; the id strings are no
longer kept alive after their spans are gone). Two ids with the same 64-bit hash are taken for each other: with
100,000 ids remembered, the chance that a new trace's id matches one of them is about 5e-15 per lookup, and string
hashes are seeded per process, so a sender cannot aim for it. Never raises.
"""

from __future__ import annotations

from collections import deque

__all__ = ["ReleasedIds"]


class ReleasedIds:
    __slots__ = ("_limit", "_order", "_ids")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._order: deque[int] = deque()
        self._ids: set[int] = set()

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, trace_id: object) -> bool:
        return hash(trace_id) in self._ids

    def add(self, trace_id: str) -> None:
        """Remember a released trace id, forgetting the oldest past the limit."""
        key = hash(trace_id)
        if not self._limit or key in self._ids:
            return
        self._ids.add(key)
        self._order.append(key)
        if len(self._order) > self._limit:
            self._ids.discard(self._order.popleft())
