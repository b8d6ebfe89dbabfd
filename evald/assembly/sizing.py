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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evald.model import LogRecord, SignalBatch, SpanRecord

__all__ = ["SPAN_OVERHEAD", "BatchSizes", "SizedBatch", "batch_sizes", "log_bytes", "sizes_of", "span_bytes",
           "split_batch", "value_bytes"]

#: estimated bytes per trace id (in arrival order), per span and per log record of a batch
BatchSizes = tuple[dict[str, int], list[int], list[int]]

#: the SpanRecord object, its trace/span/parent id strings, name, empty events tuple and attribute dict header
SPAN_OVERHEAD = 600
#: a log record's object, ids, event name and attribute dict header
LOG_OVERHEAD = 450
#: a SpanEvent object and its attribute dict header
EVENT_OVERHEAD = 250
#: one attribute: dict slot (with growth slack), the key and value object headers (str: 49 bytes + length)
ATTR_OVERHEAD = 110
#: a non-text scalar (int, float, bool, None)
SCALAR_BYTES = 32
#: a list or dict inside a value: its object and table (elements are charged like attributes)
CONTAINER_BYTES = 120


def value_bytes(value: Any) -> int:
    """Estimated bytes of one attribute value (without the attribute's own overhead)."""
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value)
    if kind is not list and kind is not dict:
        return SCALAR_BYTES
    total = 0
    stack: list[Any] = [value]  # iterative: a deeply nested value costs no recursion
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bytes:
            total += ATTR_OVERHEAD + len(item)
        elif kind is dict:
            total += CONTAINER_BYTES
            for key, inner in item.items():
                total += len(key) + ATTR_OVERHEAD // 2
                stack.append(inner)
        elif kind is list:
            total += CONTAINER_BYTES
            stack.extend(item)
        else:
            total += ATTR_OVERHEAD
    return total


def attributes_bytes(attributes: Mapping[str, Any]) -> int:
    total = ATTR_OVERHEAD * len(attributes) + sum(map(len, attributes))  # the keys, at C speed
    for value in attributes.values():
        kind = type(value)
        if kind is str:
            total += len(value)
        elif kind is int or kind is float or kind is bool:
            total += SCALAR_BYTES
        else:
            total += value_bytes(value)
    return total


def span_bytes(span: SpanRecord) -> int:
    total = SPAN_OVERHEAD + len(span.name) + len(span.status_message) + attributes_bytes(span.attributes)
    for event in span.events:
        total += EVENT_OVERHEAD + len(event.name) + attributes_bytes(event.attributes)
    return total


def log_bytes(record: LogRecord) -> int:
    body = record.body
    return (LOG_OVERHEAD + len(record.event_name) + attributes_bytes(record.attributes)
            + (0 if body is None else value_bytes(body)))


def batch_sizes(batch: SignalBatch) -> BatchSizes:
    """Estimated bytes per trace id (in arrival order), per span and per log record of ``batch``."""
    sizes: dict[str, int] = {}
    get = sizes.get
    span_sizes: list[int] = []
    add = span_sizes.append
    for span in batch.spans:
        nbytes = span_bytes(span)
        add(nbytes)
        sizes[span.trace_id] = get(span.trace_id, 0) + nbytes
    log_sizes: list[int] = []
    for rec in batch.logs:
        nbytes = log_bytes(rec)
        log_sizes.append(nbytes)
        sizes[rec.trace_id] = get(rec.trace_id, 0) + nbytes
    return sizes, span_sizes, log_sizes


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
