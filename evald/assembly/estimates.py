"""The assembly window's memory estimates: ``span_bytes``, ``log_bytes``, ``value_bytes`` and ``batch_sizes``.

What is charged and how well it matches what the records really allocate: evald/assembly/sizing.py's docstring.
This module holds only the arithmetic, so that mypyc compiles it (evald/native.py): sizing every span and log
record of every request was ~4% of ``evald run``'s busy CPU on the full mix of conventions while interpreted.

Pure functions; no configuration; they never raise on any value the OTLP conversion produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evald.model import LogRecord, SignalBatch, SpanRecord

__all__ = ["ATTR_OVERHEAD", "CONTAINER_BYTES", "EVENT_OVERHEAD", "LOG_OVERHEAD", "SCALAR_BYTES", "SPAN_OVERHEAD",
           "BatchSizes", "attributes_bytes", "batch_sizes", "log_bytes", "span_bytes", "value_bytes"]

#: estimated bytes per trace id (in arrival order), per span and per log record of a batch
BatchSizes = tuple[dict[str, int], list[int], list[int]]

#: the SpanRecord object, its trace/span/parent id strings, name, empty events tuple and attribute dict header
SPAN_OVERHEAD: Final = 600
#: a log record's object, ids, event name and attribute dict header
LOG_OVERHEAD: Final = 450
#: a SpanEvent object and its attribute dict header
EVENT_OVERHEAD: Final = 250
#: one attribute: dict slot (with growth slack), the key and value object headers (str: 49 bytes + length)
ATTR_OVERHEAD: Final = 110
#: a non-text scalar (int, float, bool, None)
SCALAR_BYTES: Final = 32
#: a list or dict inside a value: its object and table (elements are charged like attributes)
CONTAINER_BYTES: Final = 120


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
    span_sizes: list[int] = []
    for span in batch.spans:
        nbytes = span_bytes(span)
        span_sizes.append(nbytes)
        trace_id = span.trace_id
        sizes[trace_id] = sizes.get(trace_id, 0) + nbytes
    log_sizes: list[int] = []
    for rec in batch.logs:
        nbytes = log_bytes(rec)
        log_sizes.append(nbytes)
        trace_id = rec.trace_id
        sizes[trace_id] = sizes.get(trace_id, 0) + nbytes
    return sizes, span_sizes, log_sizes
