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

Pure functions; no configuration; they never raise on any value the OTLP conversion produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evald.model import LogRecord, SignalBatch, SpanRecord

__all__ = ["SPAN_OVERHEAD", "batch_sizes", "log_bytes", "span_bytes", "split_batch", "value_bytes"]

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


def batch_sizes(batch: SignalBatch) -> tuple[dict[str, int], list[int], list[int]]:
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


def split_batch(batch: SignalBatch, max_traces: int, max_bytes: int) -> list[SignalBatch]:
    """``batch`` itself when it holds at most ``max_traces`` traces and ``max_bytes``, else parts of whole traces
    within both (a single trace over ``max_bytes`` is a part of its own). The parts share the batch's delivery and
    source."""
    sizes, _, _ = batch_sizes(batch)
    if len(sizes) <= max_traces and sum(sizes.values()) <= max_bytes:
        return [batch]
    part_of: dict[str, int] = {}
    traces = nbytes = part = 0
    for trace_id, size in sizes.items():
        if traces and (traces >= max_traces or nbytes + size > max_bytes):
            part += 1
            traces = nbytes = 0
        part_of[trace_id] = part
        traces += 1
        nbytes += size
    spans: list[list[SpanRecord]] = [[] for _ in range(part + 1)]
    logs: list[list[LogRecord]] = [[] for _ in range(part + 1)]
    for span in batch.spans:
        spans[part_of[span.trace_id]].append(span)
    for rec in batch.logs:
        logs[part_of[rec.trace_id]].append(rec)
    return [replace(batch, spans=tuple(s), logs=tuple(g)) for s, g in zip(spans, logs, strict=True)]
