from __future__ import annotations

from evald.assembly.retention import RetainedTraces
from evald.model import AssembledTrace
from evald.telemetry import LabelCache, Telemetry, shared_instruments


def store(max_traces: int, max_bytes: int) -> tuple[RetainedTraces, Telemetry, list[str]]:
    from evald.assembly.memory import _instruments

    tm = Telemetry()
    evicted = LabelCache(shared_instruments(tm.registry, _instruments).evicted)
    return RetainedTraces(max_traces, max_bytes, evicted), tm, []


def trace(n: int) -> AssembledTrace:
    return AssembledTrace(trace_id=f"{n:032x}", spans=())


def evicted(tm: Telemetry, reason: str, kept: RetainedTraces | None = None) -> float:
    if kept is not None:
        kept.flush_counts()
    return tm.registry.get_sample_value("evald_assembly_retained_evicted_traces_total", {"reason": reason}) or 0.0


def test_oldest_go_first_past_either_bound_and_every_holder_is_let_go() -> None:
    kept, tm, dropped = store(max_traces=2, max_bytes=1000)
    for n, size in ((1, 300), (2, 300), (3, 300)):
        kept.add(trace(n), size, lambda n=n: dropped.append(f"{n}"))  # type: ignore[misc]
    assert f"{1:032x}" not in kept and len(kept) == 2 and kept.bytes == 600 and dropped == ["1"]
    assert evicted(tm, "count", kept) == 1
    kept.add(trace(4), 900, lambda: dropped.append("4"))  # 3 traces: 2 goes; 1200 bytes: 3 goes
    assert dropped == ["1", "2", "3"] and kept.bytes == 900 and evicted(tm, "count", kept) == 2
    assert evicted(tm, "bytes", kept) == 1
    kept.add(trace(5), 1001, lambda: dropped.append("5"))  # larger than the whole cap: never kept
    assert dropped[-1] == "5" and f"{5:032x}" not in kept and evicted(tm, "bytes", kept) == 2
    taken = kept.take(f"{4:032x}")
    assert taken is not None and taken[1] == 900 and kept.bytes == 0 and dropped[-1] == "4"
    assert kept.take(f"{4:032x}") is None and kept.get(f"{4:032x}") is None


def test_memory_limit_evictions_are_counted_apart() -> None:
    kept, tm, dropped = store(max_traces=10, max_bytes=10_000)
    kept.add(trace(1), 10, lambda: dropped.append("1"))
    kept.evict_oldest("memory_limit")
    assert dropped == ["1"] and not len(kept) and evicted(tm, "memory_limit", kept) == 1
    assert not RetainedTraces(0, 100, None).enabled and not RetainedTraces(5, 0, None).enabled
