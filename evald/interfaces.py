"""The seams between pipeline stages (the Collector's ``consumer.Traces`` and friends, as Protocols).

receivers (Source) -> TraceConsumer (assembly window) -> mapping (SpanMapper) -> pipeline -> Exporter
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from evald.case import EvalCase
from evald.frozen import fast_init
from evald.model import AssembledTrace, ConsumeResult, ScoredCase, SignalBatch


class TraceConsumer(Protocol):
    def consume(self, batch: SignalBatch) -> ConsumeResult:
        """Accept spans/logs. Raises QueueFullError (retryable) or PermanentError. Never blocks."""
        ...

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        """``batch`` in parts that each fit this consumer when it is empty (``[batch]`` when it has no such bound),
        for a source that delivers whole records and hands an oversized one on in parts (Kafka, WAL replay)."""
        ...


@runtime_checkable
class Source(Protocol):
    id: str

    async def start(self, next_consumer: TraceConsumer) -> None:
        """Bind and begin delivering; returns quickly, work runs in tasks the source owns."""
        ...

    async def shutdown(self, timeout: float) -> None:
        """Stop accepting and release resources. Idempotent; safe without start."""
        ...


@fast_init
@dataclass(frozen=True, slots=True)
class NotEvaluable:
    """A GenAI trace (or span) that cannot be scored, and why (``reason`` is a low-cardinality code)."""

    reason: str
    convention: str
    detail: str = ""
    scope: str = "trace"  # "trace" or "llm_call"
    span_id: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class MappingResult:
    cases: tuple[EvalCase, ...] = ()
    not_evaluable: tuple[NotEvaluable, ...] = ()
    warnings: tuple[str, ...] = ()


class SpanMapper(Protocol):
    """One span convention. Pure: no I/O, no clock; never raises on bad data."""

    name: ClassVar[str]

    def matches(self, trace: AssembledTrace) -> bool: ...

    def map(self, trace: AssembledTrace) -> MappingResult: ...


@runtime_checkable
class Exporter(Protocol):
    id: str

    async def start(self) -> None: ...

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Send one batch. Raise PermanentError to drop it; other exceptions may be retried."""
        ...

    async def shutdown(self, timeout: float) -> None: ...
