"""What ``SpanRecord``'s properties derive from its fields, as plain functions that mypyc compiles.

``is_root``, ``duration_ms`` and ``service_name`` are the one definition: the record's properties call them, and
the compiled mappers call them directly (a property read from compiled code is a Python call, ~800 instructions;
these are C calls). Pure; no configuration; they never raise on a record the OTLP conversion produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Span(Protocol):
    """The fields these read (``SpanRecord`` has them; a protocol, so this module needs no import of the model)."""

    @property
    def parent_span_id(self) -> str | None: ...
    @property
    def start_time_unix_nano(self) -> int: ...
    @property
    def end_time_unix_nano(self) -> int: ...
    @property
    def resource(self) -> Mapping[str, Any]: ...


def is_root(span: Span) -> bool:
    """No parent span (an empty or absent parent id)."""
    return not span.parent_span_id


def duration_ms(span: Span) -> float | None:
    """End minus start in milliseconds; None without an end time or when the end is before the start."""
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if end <= 0 or end < start:
        return None
    return (end - start) / 1e6


def service_name(span: Span) -> str | None:
    """The resource's ``service.name`` when it is a string."""
    resource = span.resource
    # compiled: a direct dict read when it is a dict (on a Mapping, a method lookup and generic call)
    name = resource.get("service.name") if isinstance(resource, dict) else resource.get("service.name")
    return name if isinstance(name, str) else None
