"""Released traces kept (spans and logs) so a late span can reopen them: bounded by count and by bytes.

``RetainedTraces(max_traces, max_bytes, evicted)`` is owned by the assembly window; its bounds come from
``assembly.late_retention`` (count) and ``assembly.memory_limiter.retention_limit_mib`` (bytes, as estimated by
evald/assembly/sizing.py). The oldest retained trace goes first whenever a bound is passed, counted in
``evald_assembly_retained_evicted_traces_total{reason}`` (added up once per release pass, ``flush_counts``):
``count`` (past ``late_retention``), ``bytes`` (past the byte cap; a trace larger than the whole cap is never
retained and counted so too) and ``memory_limit`` (evicted because the window needed the memory: the memory
limiter empties this store before it refuses anything).

Each trace comes with its memory charge's ``drop`` (evald/assembly/memory.py), called when it leaves the store.
Nothing acknowledged is lost by an eviction: the trace was already evaluated; a later span of it is then only
counted as ``late`` instead of re-evaluating the trace. Never raises.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from evald.model import AssembledTrace

__all__ = ["RetainedTraces"]


class RetainedTraces:
    __slots__ = ("_max_traces", "_max_bytes", "_traces", "_evicted", "_unflushed", "bytes")

    def __init__(self, max_traces: int, max_bytes: int, evicted: Any) -> None:
        self._max_traces = max_traces
        self._max_bytes = max_bytes
        # oldest first: trace, its estimate, its memory charge's drop
        self._traces: OrderedDict[str, tuple[AssembledTrace, int, Callable[[], None]]] = OrderedDict()
        self._evicted = evicted  # a LabelCache of the eviction counter
        self._unflushed: dict[str, int] = {}  # evictions not yet added to the counter (flush_counts)
        #: estimated bytes held (sum over the retained traces)
        self.bytes = 0

    @property
    def enabled(self) -> bool:
        return self._max_traces > 0 and self._max_bytes > 0

    def __len__(self) -> int:
        return len(self._traces)

    def __contains__(self, trace_id: object) -> bool:
        return trace_id in self._traces

    def get(self, trace_id: str) -> AssembledTrace | None:
        kept = self._traces.get(trace_id)
        return None if kept is None else kept[0]

    def add(self, trace: AssembledTrace, nbytes: int, drop: Callable[[], None]) -> None:
        """Keep a released trace (``nbytes``: its estimate), evicting the oldest past either bound."""
        if nbytes > self._max_bytes:
            self._unflushed["bytes"] = self._unflushed.get("bytes", 0) + 1
            drop()
            return
        if trace.trace_id in self._traces:
            self.take(trace.trace_id)
        self._traces[trace.trace_id] = (trace, nbytes, drop)
        self.bytes += nbytes
        if len(self._traces) > self._max_traces:
            self.evict_oldest("count")
        while self.bytes > self._max_bytes:
            self.evict_oldest("bytes")

    def take(self, trace_id: str) -> tuple[AssembledTrace, int] | None:
        """Remove and return a retained trace with its estimate (a late span reopens it: the window charges it
        again)."""
        kept = self._traces.pop(trace_id, None)
        if kept is None:
            return None
        self.bytes -= kept[1]
        kept[2]()
        return kept[0], kept[1]

    def evict_oldest(self, reason: str) -> None:
        _, (_, nbytes, drop) = self._traces.popitem(last=False)
        self.bytes -= nbytes
        self._unflushed[reason] = self._unflushed.get(reason, 0) + 1
        drop()

    def flush_counts(self) -> None:
        """Add the evictions since the last call to the counter (once per release pass, not per trace: a counter
        increment takes a lock)."""
        if self._unflushed:
            for reason, n in self._unflushed.items():
                self._evicted.get(reason).inc(n)
            self._unflushed.clear()
