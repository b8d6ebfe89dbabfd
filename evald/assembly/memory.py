"""The assembly window's memory limiter: every span and log record held is charged its estimated bytes.

Config keys (``assembly.memory_limiter:``, named after the Collector's ``memory_limiter`` processor):
``limit_mib`` (default 512), ``spike_limit_mib`` (default 128; the soft limit is ``limit_mib - spike_limit_mib``)
and ``retention_limit_mib`` (default 8: the most the late-retention store keeps; its real cost is about twice the
estimate, see docs/architecture.md, "Memory bounds").

What is charged (estimates from evald/assembly/sizing.py, within 0.85-1.1x of what the records really allocate
on the corpus): spans and logs being assembled (``window``) and released traces until the pipeline finished
every case derived from them or, when retained for late spans, until they leave the retention store
(``released``; a trace is charged once however many hold it). Their sum never passes the soft limit.

Failure semantics, checked per batch before anything of it is kept:

* when the batch would pass the soft limit, retained traces are evicted first, oldest first (counted in
  ``evald_assembly_retained_evicted_traces_total{reason="memory_limit"}``);
* if it still does not fit and would fit an empty window, the whole batch is refused with ``QueueFullError`` (the
  receivers answer UNAVAILABLE / 503 with a retry hint; counted in
  ``evald_assembly_refused_requests_total{reason="memory_limit"}``, or ``window_full`` for ``num_traces``);
* a batch that could never fit whole (more new traces than ``num_traces``, or more bytes than the soft limit) is
  never refused as retryable once part of it fits: its traces are taken in order while they fit and the rest are
  rejected as partial success (not retried by senders; ``reason="request_too_large"``). Only when nothing of it
  fits now is it refused with a retry hint (the retry is then taken in part); a batch of which not even one
  trace fits an empty window is rejected whole as partial success.

``evald_assembly_held_bytes{store}`` (``window``, ``released``, ``retained``: the retained part of ``released``)
and ``evald_assembly_memory_soft_limit_bytes`` are read at scrape time. The 512 MiB default keeps evald within the
Helm chart's 1 GiB limit (docs/architecture.md, "Memory bounds").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import Field, model_validator

from evald.assembly.retention import RetainedTraces
from evald.config.base import ComponentConfig
from evald.errors import QueueFullError
from evald.telemetry import LabelCache, Telemetry, shared_instruments

__all__ = ["Charge", "MemoryLimiter", "MemoryLimiterConfig"]

MIB = 1 << 20


class MemoryLimiterConfig(ComponentConfig):
    limit_mib: int = Field(512, gt=0, description="Most MiB (estimated) of spans and logs the window and the "
                           "released traces still being evaluated or retained hold together.")
    spike_limit_mib: int = Field(128, ge=0, description="Headroom below `limit_mib`: new data is refused (retryable) "
                                 "above the soft limit `limit_mib - spike_limit_mib`, after retained traces went.")
    retention_limit_mib: int = Field(8, ge=0, description="Most MiB (estimated) of released traces kept for late "
                                     "spans (`late_retention`); the oldest go first. Each MiB costs about 2 MB of "
                                     "process memory (allocator pages the kept traces pin).")

    @model_validator(mode="after")
    def _check(self) -> MemoryLimiterConfig:
        if self.spike_limit_mib >= self.limit_mib:
            raise ValueError(f"`spike_limit_mib` ({self.spike_limit_mib}) must be below `limit_mib` ({self.limit_mib})")
        if self.retention_limit_mib > self.limit_mib - self.spike_limit_mib:
            raise ValueError(f"`retention_limit_mib` ({self.retention_limit_mib}) must not exceed the soft limit "
                             f"`limit_mib - spike_limit_mib` ({self.limit_mib - self.spike_limit_mib})")
        return self


@dataclass(frozen=True, slots=True)
class _Instruments:
    held: Gauge
    soft_limit: Gauge
    evicted: Counter
    refused: Counter


def _instruments(r: CollectorRegistry) -> _Instruments:
    return _Instruments(
        held=Gauge("evald_assembly_held_bytes", "Estimated bytes of spans and logs held, by store (window: being "
                   "assembled; released: being evaluated or retained; retained: the retained part).", ["store"],
                   registry=r),
        soft_limit=Gauge("evald_assembly_memory_soft_limit_bytes",
                         "assembly.memory_limiter soft limit: above it new data is refused.", registry=r),
        evicted=Counter("evald_assembly_retained_evicted_traces", "Released traces evicted from the late-retention "
                        "store, by reason (count, bytes, memory_limit).", ["reason"], registry=r),
        refused=Counter("evald_assembly_refused_requests", "Batches the window refused whole (window_full, "
                        "memory_limit: retryable) or in part (request_too_large: partial success).", ["reason"],
                        registry=r),
    )


class Charge:
    """The bytes of one released trace, charged until every holder (the pipeline, the retention store) let go."""

    __slots__ = ("nbytes", "holders", "_limiter")

    def __init__(self, limiter: MemoryLimiter, nbytes: int, holders: int) -> None:
        self.nbytes = nbytes
        self.holders = holders
        self._limiter = limiter

    def drop(self) -> None:
        self.holders -= 1
        if self.holders == 0:
            self._limiter.released_bytes -= self.nbytes


class MemoryLimiter:
    def __init__(self, config: MemoryLimiterConfig, late_retention: int, telemetry: Telemetry) -> None:
        self.soft_limit = (config.limit_mib - config.spike_limit_mib) * MIB
        ins = shared_instruments(telemetry.registry, _instruments)
        self._refused = LabelCache(ins.refused)
        self.retained = RetainedTraces(late_retention, config.retention_limit_mib * MIB, LabelCache(ins.evicted))
        self.window_bytes = 0
        self.released_bytes = 0
        ins.soft_limit.set(self.soft_limit)
        ins.held.labels("window").set_function(lambda: self.window_bytes)
        ins.held.labels("released").set_function(lambda: self.released_bytes)
        ins.held.labels("retained").set_function(lambda: self.retained.bytes)

    @property
    def held(self) -> int:
        return self.window_bytes + self.released_bytes

    def release(self, nbytes: int, retain: Any | None) -> Callable[[], None]:
        """A trace of ``nbytes`` leaves the window for the pipeline (and the retention store when ``retain`` is
        the released trace); returns what the pipeline calls when it is done with it."""
        self.window_bytes -= nbytes
        self.released_bytes += nbytes
        charge = Charge(self, nbytes, 1)
        if retain is not None:
            charge.holders += 1
            self.retained.add(retain, nbytes, charge.drop)
        return charge.drop

    def fits(self, incoming: int) -> bool:
        """Whether ``incoming`` more bytes stay under the soft limit, evicting retained traces first if needed."""
        if self.held + incoming <= self.soft_limit:
            return True
        while self.held + incoming > self.soft_limit and len(self.retained):
            self.retained.evict_oldest("memory_limit")
        self.retained.flush_counts()
        return self.held + incoming <= self.soft_limit

    def admit(self, sizes: dict[str, int], new_ids: set[str], room: int, num_traces: int,
              retry_after: float) -> tuple[set[str], str]:
        """Decide a batch (``sizes``: estimated bytes per trace id, in arrival order; ``new_ids``: the traces that
        need a place; ``room``: places free). Returns the trace ids rejected as partial success (usually none) and
        the message saying so; raises ``QueueFullError`` when the batch must be retried (module docstring)."""
        incoming = sum(sizes.values())
        if len(new_ids) <= room and self.fits(incoming):
            return set(), ""
        if len(new_ids) <= num_traces and incoming <= self.soft_limit:  # it fits once the window drains
            self._refuse("window_full" if len(new_ids) > room else "memory_limit", room, num_traces, retry_after)
        self.fits(incoming)  # as much room as retained traces can give
        free = self.soft_limit - self.held
        rejected: set[str] = set()
        for trace_id, nbytes in sizes.items():
            new = trace_id in new_ids
            if nbytes <= free and (room > 0 or not new):
                free -= nbytes
                room -= new
            else:
                rejected.add(trace_id)
        if len(rejected) == len(sizes) and any(n <= self.soft_limit for n in sizes.values()):
            self._refuse("window_full" if room <= 0 else "memory_limit", room, num_traces, retry_after)
        self._refused.get("request_too_large").inc()
        return rejected, (f"{len(rejected)} of the request's {len(sizes)} traces did not fit the assembly window "
                          f"(num_traces {num_traces}, memory soft limit {self.soft_limit // MIB} MiB) and were "
                          "rejected")

    def _refuse(self, reason: str, room: int, num_traces: int, retry_after: float) -> None:
        self._refused.get(reason).inc()
        if reason == "window_full":
            raise QueueFullError(f"assembly window is full ({num_traces - room} of {num_traces} traces)",
                                 retry_after=retry_after)
        raise QueueFullError(f"assembly window memory limit reached ({self.held // MIB} MiB held, soft limit "
                             f"{self.soft_limit // MIB} MiB)", retry_after=retry_after)
