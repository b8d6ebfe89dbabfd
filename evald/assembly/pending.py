"""A trace being assembled in the window (``PendingTrace``) and what it becomes when released or reopened.

Plain data and pure functions used by evald/assembly/window.py; no configuration, nothing here raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import attrgetter

from evald.model import AssembledTrace, Delivery, LogRecord, SpanRecord, new_assembled_trace

__all__ = ["FULL", "UNSCHEDULED", "PendingTrace", "assembled", "reopened"]

_START_ORDER = attrgetter("start_time_unix_nano", "span_id")  # released spans: by start time, then id
#: the deadline of an entry created in this consume() call, which pushes its real one onto the heap once (one heap
#: entry per trace instead of a decision_wait entry left stale on the heap until it expires)
UNSCHEDULED = math.inf


@dataclass(slots=True)
class PendingTrace:
    trace_id: str
    first_seen: float
    deadline: float
    spans: dict[str, SpanRecord] = field(default_factory=dict)
    logs: list[LogRecord] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    has_root: bool = False
    truncated: bool = False
    revision: int = 1
    nbytes: int = 0  # estimated bytes of its spans and logs (evald/assembly/sizing.py)


#: stands for a retained trace already at max_spans_per_trace: its late spans are rejected, it is not reopened
FULL = PendingTrace(trace_id="", first_seen=0.0, deadline=0.0)


def assembled(entry: PendingTrace) -> AssembledTrace:
    """The released form of a held trace: spans by start time, flagged incomplete without a root or truncated."""
    return new_assembled_trace(
        trace_id=entry.trace_id,
        spans=tuple(sorted(entry.spans.values(), key=_START_ORDER)),
        logs=tuple(entry.logs),
        complete=entry.has_root and not entry.truncated,
        truncated=entry.truncated,
        revision=entry.revision,
    )


def reopened(kept: AssembledTrace, nbytes: int, now: float) -> PendingTrace:
    """A released trace held again because a late span arrived: its next revision."""
    return PendingTrace(trace_id=kept.trace_id, first_seen=now, deadline=UNSCHEDULED,
                        spans={s.span_id: s for s in kept.spans}, logs=list(kept.logs),
                        has_root=any(s.is_root for s in kept.spans), truncated=kept.truncated,
                        revision=kept.revision + 1, nbytes=nbytes)
