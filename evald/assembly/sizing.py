"""Cheap estimates of the memory a span or log record holds, for the assembly window's byte accounting.

``span_bytes(span)`` / ``log_bytes(record)``: a fixed overhead per record (the record object, its ids, its
attribute dict) plus, per attribute, a fixed overhead and the length of its key and of its value (``str`` and
``bytes`` by length; lists and maps walked, every element charged the same way; other scalars a fixed size).
Events are charged like attribute sets. The resource is not charged: the OTLP conversion shares one resource dict
between the records of a request (and across requests), so it costs nothing per span.

Lengths are characters, not bytes: a CPython ``str`` stores 1, 2 or 4 bytes per character depending on its widest
character, so text outside Latin-1 is under-estimated by up to 4x (the fixed overheads absorb part of it on small
values). The constants were fitted with tracemalloc on the corpus (``tests/assembly/test_sizing.py`` measures the
ratio of what converting a request really allocates to the estimate: 0.85-1.1 over the corpus configurations,
1.0-1.05 for large attribute values; docs/architecture.md, "Memory bounds").

``split_batch(batch, max_traces, max_bytes)`` cuts a batch into parts of whole traces (in arrival order) that each
fit an empty window, for a source that would rather deliver an oversized batch in parts than have the rest
rejected (replay, a Kafka record): each part may still be refused with a retry hint while the window is full.
Each part is a ``SizedBatch``: it carries the estimates split_batch computed, and ``sizes_of(part)`` (what the
window's ``consume`` calls) returns them instead of sizing the same spans again; a batch built any other way, or a
``SizedBatch`` whose spans or logs were replaced, is sized afresh.

Pure functions; no configuration; they never raise on any value the OTLP conversion produces.
"""

from __future__ import annotations

from dataclasses import dataclass

from evald.assembly.estimates import (
    SPAN_OVERHEAD,
    BatchSizes,
    batch_sizes,
    log_bytes,
    span_bytes,
    value_bytes,
)
from evald.model import LogRecord, SignalBatch, SpanRecord

__all__ = ["SPAN_OVERHEAD", "BatchSizes", "SizedBatch", "batch_sizes", "log_bytes", "sizes_of", "span_bytes",
           "split_batch", "value_bytes"]


@dataclass(frozen=True, slots=True)
class SizedBatch(SignalBatch):
    """A part made by ``split_batch``, with the estimates of its spans and logs (``sizes``) and the tuples they were
    computed for (``sized``: a copy made with other spans or logs is sized again)."""

    sizes: BatchSizes = ({}, [], [])
    sized: tuple[tuple[SpanRecord, ...], tuple[LogRecord, ...]] = ((), ())


def sizes_of(batch: SignalBatch) -> BatchSizes:
    """``batch_sizes(batch)``, or the estimates a ``SizedBatch`` carries for exactly its spans and logs."""
    if isinstance(batch, SizedBatch) and batch.sized[0] is batch.spans and batch.sized[1] is batch.logs:
        return batch.sizes
    return batch_sizes(batch)


def _part(batch: SignalBatch, spans: tuple[SpanRecord, ...], logs: tuple[LogRecord, ...],
          sizes: BatchSizes) -> SizedBatch:
    return SizedBatch(spans=spans, logs=logs, delivery=batch.delivery, source=batch.source, sizes=sizes,
                      sized=(spans, logs))


def split_batch(batch: SignalBatch, max_traces: int, max_bytes: int) -> list[SignalBatch]:
    """``batch``'s spans and logs as one part when they hold at most ``max_traces`` traces and ``max_bytes``, else
    parts of whole traces within both (a single trace over ``max_bytes`` is a part of its own). The parts share the
    batch's delivery and source and carry their estimates (``SizedBatch``)."""
    sizes, span_sizes, log_sizes = sizes_of(batch)
    if len(sizes) <= max_traces and sum(sizes.values()) <= max_bytes:
        return [_part(batch, batch.spans, batch.logs, (sizes, span_sizes, log_sizes))]
    part_of: dict[str, int] = {}
    part_sizes: list[dict[str, int]] = [{}]
    traces = nbytes = 0
    for trace_id, size in sizes.items():
        if traces and (traces >= max_traces or nbytes + size > max_bytes):
            part_sizes.append({})
            traces = nbytes = 0
        part_of[trace_id] = len(part_sizes) - 1
        part_sizes[-1][trace_id] = size
        traces += 1
        nbytes += size
    n = len(part_sizes)
    spans: list[list[SpanRecord]] = [[] for _ in range(n)]
    spans_bytes: list[list[int]] = [[] for _ in range(n)]
    for span, size in zip(batch.spans, span_sizes, strict=True):
        part = part_of[span.trace_id]
        spans[part].append(span)
        spans_bytes[part].append(size)
    logs: list[list[LogRecord]] = [[] for _ in range(n)]
    logs_bytes: list[list[int]] = [[] for _ in range(n)]
    for rec, size in zip(batch.logs, log_sizes, strict=True):
        part = part_of[rec.trace_id]
        logs[part].append(rec)
        logs_bytes[part].append(size)
    return [_part(batch, tuple(spans[i]), tuple(logs[i]), (part_sizes[i], spans_bytes[i], logs_bytes[i]))
            for i in range(n)]
