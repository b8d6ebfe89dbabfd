"""What a conversion returns (``evald.receivers.convert``): the records plus, by reason, what was left out.

Kept apart from the conversion itself because that module is compiled with mypyc (evald/native.py) and this
generic dataclass is plain Python that the transports, the file reader and the Kafka receiver share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from evald.model import LogRecord, SpanRecord

T = TypeVar("T", SpanRecord, LogRecord)

INVALID_ID = "invalid_id"
NO_TRACE_ID = "no_trace_id"
UNDECODABLE = "undecodable"  # set by salvage.py, not by the conversion

#: English explanation of each rejection reason, used in partial-success ``error_message``s.
REASONS: dict[str, str] = {
    INVALID_ID: "trace_id must be 16 bytes and span_id 8 bytes, not all zeros (parent_span_id empty or 8 bytes)",
    NO_TRACE_ID: "log records without a trace_id cannot be joined to a span",
    UNDECODABLE: "cannot be decoded on its own, e.g. a value nested deeper than the decoder's limit of 100 levels",
}


@dataclass(frozen=True, slots=True)
class Converted(Generic[T]):
    """The records that could be converted and, by reason, how many items were left out."""

    records: tuple[T, ...]
    rejected: dict[str, int] = field(default_factory=dict)

    @property
    def rejected_count(self) -> int:
        return sum(self.rejected.values())

    def message(self, noun: str) -> str:
        """Partial-success text, e.g. ``"2 spans rejected (invalid_id: trace_id must be ...)"``; "" if none."""
        if not self.rejected:
            return ""
        reasons = "; ".join(f"{reason}: {REASONS.get(reason, reason)}" for reason in sorted(self.rejected))
        return f"{self.rejected_count} {noun} rejected ({reasons})"
