"""Trace assembly window: groups spans and log records by trace id and releases whole traces.

Config keys (``assembly:``): ``settle`` (quiet time after the root span arrived, default 2s), ``decision_wait`` (the
longest a trace is held, from its first item, default 30s), ``num_traces`` (traces held at once, default 50000),
``max_spans_per_trace`` (default 2000), ``max_logs_per_trace`` (default 2000), ``released_memory`` (how many
released trace ids are remembered to spot late and redelivered spans, default 100000; kept as hashes,
evald/assembly/released.py), ``late_spans`` (``reevaluate`` (default) or ``drop``), ``late_retention`` (released
traces kept with their spans for re-evaluation, default 5000; also bounded by ``memory_limiter.retention_limit_mib``,
default 8 MiB).

Release: when the root span has arrived and nothing new came for ``settle``, or ``decision_wait`` after the first
item (then the trace is flagged ``complete=False`` if it has no root); ``flush`` releases every held trace and
``release(ids)`` given ones (``evald replay``: once the last input file holding them has been read).

Memory: ``memory_limiter`` (``limit_mib``, ``spike_limit_mib``, ``retention_limit_mib``; evald/assembly/memory.py).

Failure semantics: a batch that would need more than ``num_traces`` traces, or pass the memory limiter's soft
limit, is refused whole with QueueFullError (receivers answer UNAVAILABLE / 503 with a retry hint), so nothing
acknowledged is lost; one that could never fit whole is taken in part (partial success for the rest; memory.py).
Spans past ``max_spans_per_trace`` are rejected (partial success, counted by the receivers as refused, not again
here). Redelivered spans (same trace and span id) are accepted and dropped as ``duplicate``.
Late spans: a new span of a trace that was already released reopens it (``late_spans: reevaluate``) from the
retained copy of its last ``late_retention`` released traces: the trace is assembled again with the late span,
released after ``settle`` with ``revision`` + 1, and its cases (metadata ``revision``) supersede the earlier ones
(same identity: trace, span, metric), counted in ``evald_assembly_reopened_traces_total``. A late span the window
rejects (its retained trace is already at ``max_spans_per_trace``) never reopens it. A late span of a trace no
longer retained, or any late span with ``late_spans: drop``, is accepted and dropped as ``late``; late log records
are always dropped as ``late`` (they carry no id to tell a redelivery from new data). Every drop is counted in
``evald_assembly_dropped_spans_total{reason}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from pydantic import Field, model_validator

from evald.assembly.completion import Completion
from evald.assembly.memory import MemoryLimiter, MemoryLimiterConfig
from evald.assembly.pending import FULL, UNSCHEDULED, PendingTrace, assembled, reopened
from evald.assembly.released import ReleasedIds
from evald.assembly.sizing import sizes_of, split_batch
from evald.config.base import ComponentConfig, Duration
from evald.errors import QueueFullError
from evald.model import AssembledTrace, ConsumeResult, SignalBatch, SpanRecord
from evald.telemetry import LabelCache, Telemetry


class AssemblyConfig(ComponentConfig):
    settle: Duration = Field(2.0, description="Quiet time after the root span arrived before the trace is released.")
    decision_wait: Duration = Field(30.0, description="Longest a trace is held (from its first item).")
    num_traces: int = Field(50_000, gt=0, description="Traces held at once; beyond it receivers ask to retry.")
    max_spans_per_trace: int = Field(2_000, gt=0, description="Spans kept per trace; more are partial-success rejects.")
    max_logs_per_trace: int = Field(
        2_000, gt=0, description="Log records kept per trace; more are partial-success rejects."
    )
    released_memory: int = Field(
        100_000, ge=0, description="Released trace ids remembered, to count late and redelivered spans."
    )
    late_spans: Literal["reevaluate", "drop"] = Field(
        "reevaluate", description="A new span of a recently released trace: re-evaluate the trace, or drop it."
    )
    late_retention: int = Field(
        5_000, ge=0, description="Released traces kept (spans and logs) so late spans can re-evaluate them."
    )
    memory_limiter: MemoryLimiterConfig = Field(
        default_factory=MemoryLimiterConfig, description="Byte bounds of the window and the late-retention store."
    )

    @model_validator(mode="after")
    def _check_waits(self) -> AssemblyConfig:
        if self.decision_wait < self.settle:
            raise ValueError(f"`decision_wait` ({self.decision_wait:g}s) must be >= `settle` ({self.settle:g}s)")
        return self


TraceSink = Callable[[AssembledTrace, Completion], Awaitable[None]]
def _exceeds(kind: str, trace_id: str, limit: int) -> str:
    return f"trace {trace_id} exceeds max_{kind}_per_trace ({limit}); further {kind} of it were rejected"


class TraceWindow:
    """Implements TraceConsumer for the receivers and feeds released traces to a sink."""

    def __init__(
        self, config: AssemblyConfig, telemetry: Telemetry, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._cfg = config
        self._tm = telemetry
        self._clock = clock
        self._pending: dict[str, PendingTrace] = {}
        self._heap: list[tuple[float, str]] = []
        self._released = ReleasedIds(config.released_memory)  # compact: hashes, not the id strings
        self._memory = MemoryLimiter(config.memory_limiter, config.late_retention, telemetry)
        self._retained = self._memory.retained  # released, kept for late spans (bounded by count and bytes)
        self._retain = config.late_spans == "reevaluate" and self._retained.enabled
        self._retry_after = max(config.settle, 0.5)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # read at scrape time, not set on every batch and release; counters bound once (hot path)
        telemetry.traces_in_window.set_function(self.__len__)
        self._released_counters = LabelCache(telemetry.traces_released)
        self._dropped_spans = LabelCache(telemetry.dropped_spans)  # per span on redelivery

    # -- intake -------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._pending)

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        if self._closed:
            raise QueueFullError("evald is shutting down", retry_after=self._cfg.settle or 1.0)
        sizes, span_sizes, log_sizes = sizes_of(batch)  # estimated bytes per trace id, span, log (split's if a part)
        # a released trace takes a place again only if a late span can reopen it (retained)
        pending, released, retained = self._pending, self._released, self._retained
        new_ids = {t for t in sizes if t not in pending and (t not in released or t in retained)}
        refused, note = self._memory.admit(sizes, new_ids, self._cfg.num_traces - len(pending), self._cfg.num_traces,
                                           self._retry_after)  # raises QueueFullError when the batch is to be retried
        now = self._clock()
        touched: dict[str, PendingTrace] = {}
        rejected_spans = added = 0
        too_large = ""
        last_trace, entry = "", None  # a trace's spans usually arrive together: look its entry up once
        for span, nbytes in zip(batch.spans, span_sizes, strict=True):
            if span.trace_id != last_trace or entry is None:
                last_trace = span.trace_id
                if refused and last_trace in refused:
                    rejected_spans += 1
                    entry = None
                    continue
                entry = self._entry(last_trace, now, touched) or self._reopen(span, now, touched)
                if entry is None:
                    continue
            if span.span_id in entry.spans:
                self._dropped_spans.get("duplicate").inc()
                continue
            if entry is FULL or len(entry.spans) >= self._cfg.max_spans_per_trace:
                if entry is not FULL:
                    entry.truncated = True
                rejected_spans += 1  # reported back as partial success; the receivers count it as refused
                too_large = too_large or _exceeds("spans", span.trace_id, self._cfg.max_spans_per_trace)
                continue
            entry.spans[span.span_id] = span
            entry.nbytes += nbytes
            added += nbytes
            if not span.parent_span_id:  # SpanRecord.is_root, without a property call per span
                entry.has_root = True
        rejected_logs = 0
        for rec, nbytes in zip(batch.logs, log_sizes, strict=True):
            if refused and rec.trace_id in refused:
                rejected_logs += 1
                continue
            log_entry = self._entry(rec.trace_id, now, touched)
            if log_entry is None:
                self._tm.dropped_logs.labels("late").inc()
                continue
            if len(log_entry.logs) >= self._cfg.max_logs_per_trace:
                rejected_logs += 1
                too_large = too_large or _exceeds("logs", rec.trace_id, self._cfg.max_logs_per_trace)
                continue
            log_entry.logs.append(rec)
            log_entry.nbytes += nbytes
            added += nbytes
        self._memory.window_bytes += added
        for entry in touched.values():
            if batch.delivery is not None:
                batch.delivery.hold()
                entry.deliveries.append(batch.delivery)
            deadline = entry.first_seen + self._cfg.decision_wait
            if entry.has_root:
                deadline = min(deadline, now + self._cfg.settle)
            if deadline != entry.deadline:
                entry.deadline = deadline
                heapq.heappush(self._heap, (deadline, entry.trace_id))
        if touched:
            self._wake.set()
        message = "; ".join(m for m in (note, too_large) if m)
        return ConsumeResult(rejected_spans=rejected_spans, rejected_logs=rejected_logs, message=message)

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        """``batch`` in parts that each fit an empty window (``split_batch``), for sources that deliver in parts; each
        part carries its byte estimates, which ``consume`` takes instead of sizing the part again."""
        return split_batch(batch, self._cfg.num_traces, self._memory.soft_limit)

    def _entry(self, trace_id: str, now: float, touched: dict[str, PendingTrace]) -> PendingTrace | None:
        entry = touched.get(trace_id) or self._pending.get(trace_id)
        if entry is None:
            if trace_id in self._released:
                return None
            entry = PendingTrace(trace_id=trace_id, first_seen=now, deadline=UNSCHEDULED)  # consume() schedules it
            self._pending[trace_id] = entry
        touched[trace_id] = entry
        return entry

    def _reopen(self, span: SpanRecord, now: float, touched: dict[str, PendingTrace]) -> PendingTrace | None:
        """A span of a released trace: reopen it from the retained copy (policy ``reevaluate``), else count it."""
        kept = self._retained.get(span.trace_id)
        if kept is None:
            self._dropped_spans.get("late").inc()
            return None
        if any(s.span_id == span.span_id for s in kept.spans):
            self._dropped_spans.get("duplicate").inc()
            return None
        if len(kept.spans) >= self._cfg.max_spans_per_trace:
            return FULL  # the span will be rejected: the trace stays released, nothing is re-scored
        _, nbytes = self._retained.take(span.trace_id) or (kept, 0)
        entry = reopened(kept, nbytes, now)
        self._memory.window_bytes += nbytes
        self._pending[kept.trace_id] = entry
        touched[kept.trace_id] = entry
        self._tm.traces_reopened.inc()
        return entry

    # -- release ------------------------------------------------------------------------------------------------

    def _pop(self, trace_id: str, retain: bool = True) -> tuple[AssembledTrace, Completion]:
        """Remove a held trace and build what is released (callers count releases in bulk); ``retain=False``: not
        kept for late spans (nothing can arrive any more)."""
        entry = self._pending.pop(trace_id)
        self._released.add(trace_id)
        trace = assembled(entry)
        on_done = self._memory.release(entry.nbytes, trace if retain and self._retain else None)
        return trace, Completion(entry.deliveries, on_done)

    def due(self) -> list[str]:
        """Trace ids whose deadline has passed (stale heap entries are skipped)."""
        now = self._clock()
        ready: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            deadline, trace_id = heapq.heappop(self._heap)
            entry = self._pending.get(trace_id)
            if entry is not None and entry.deadline == deadline:
                ready.append(trace_id)
        return ready

    async def release_due(self, sink: TraceSink) -> int:
        released = {"root_settled": 0, "decision_wait": 0}  # counted once per call, not per trace
        try:
            for trace_id in self.due():
                entry = self._pending.get(trace_id)
                if entry is None:
                    continue
                settled = entry.has_root and entry.deadline < entry.first_seen + self._cfg.decision_wait
                trigger = "root_settled" if settled else "decision_wait"
                trace, completion = self._pop(trace_id)
                released[trigger] += 1
                await sink(trace, completion)
        finally:
            self._retained.flush_counts()
            for trigger, n in released.items():
                if n:
                    self._released_counters.get(trigger).inc(n)
        return sum(released.values())

    async def flush(self, sink: TraceSink, *, final: bool = False) -> int:
        """Release every held trace now; ``final`` (replay end, shutdown): none is retained for late spans."""
        return await self.release(list(self._pending), sink, trigger="flush", retain=not final)

    async def release(self, trace_ids: Iterable[str], sink: TraceSink, *, trigger: str = "last_file",
                      retain: bool = False) -> int:
        """Release those of ``trace_ids`` still held (``evald replay``: after the last input file holding them)."""
        count = 0
        try:
            for trace_id in trace_ids:
                if trace_id in self._pending:
                    trace, completion = self._pop(trace_id, retain)
                    count += 1
                    await sink(trace, completion)
        finally:
            self._retained.flush_counts()
            if count:
                self._released_counters.get(trigger).inc(count)
            if not self._pending or len(self._heap) > 2 * len(self._pending) + 1024:  # released traces' deadlines
                pending = self._pending
                self._heap = [(d, t) for d, t in self._heap if (e := pending.get(t)) is not None and e.deadline == d]
                heapq.heapify(self._heap)
        return count

    def drop_all(self, reason: str) -> int:
        """Drop everything still held (counted), releasing the deliveries so sources are not stuck."""
        count = len(self._pending)
        for entry in list(self._pending.values()):
            self._memory.window_bytes -= entry.nbytes
            self._tm.dropped_spans.labels(reason).inc(len(entry.spans))
            for delivery in entry.deliveries:
                delivery.release()
        self._pending.clear()
        self._heap.clear()
        return count

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def start(self, sink: TraceSink, tick: float = 0.05) -> None:
        self._task = asyncio.create_task(self._run(sink, tick), name="evald:assembly")

    async def _run(self, sink: TraceSink, tick: float) -> None:
        while True:
            await self.release_due(sink)
            delay = tick
            if self._heap:
                delay = min(tick, max(0.0, self._heap[0][0] - self._clock()))
            self._wake.clear()
            try:
                async with asyncio.timeout(delay if delay > 0 else tick):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def shutdown(self, sink: TraceSink | None, timeout: float) -> None:
        """Stop intake; release what is held to ``sink`` within ``timeout``, drop (counted) the rest."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if sink is not None:
            try:
                async with asyncio.timeout(timeout):
                    await self.flush(sink, final=True)
            except TimeoutError:
                pass
        self.drop_all("shutdown")
