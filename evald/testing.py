"""Test doubles and builders shipped with evald (like the OTel SDK's InMemorySpanExporter).

``span()``/``log()`` build records with sensible defaults; ``FakeClock`` drives the assembly window;
``InMemoryExporter`` (re-exported) collects scored cases.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from evald.exporters.memory import InMemoryExporter
from evald.model import STATUS_UNSET, LogRecord, SpanRecord

__all__ = ["FakeClock", "InMemoryExporter", "chat_span", "log", "span"]

_ids = itertools.count(1)


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def span(
    trace_id: str = "0af7651916cd43dd8448eb211c80319c",
    span_id: str | None = None,
    parent: str | None = None,
    name: str = "span",
    attributes: dict[str, Any] | None = None,
    start_ms: float = 0.0,
    duration_ms: float = 10.0,
    status_code: int = STATUS_UNSET,
    service_name: str = "test-service",
) -> SpanRecord:
    start = int(1_700_000_000_000_000_000 + start_ms * 1e6)
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id or f"{next(_ids):016x}",
        parent_span_id=parent,
        name=name,
        kind=3,
        start_time_unix_nano=start,
        end_time_unix_nano=start + int(duration_ms * 1e6),
        attributes=attributes or {},
        status_code=status_code,
        resource={"service.name": service_name},
    )


def chat_span(
    question: str = "What is the capital of France?",
    answer: str | None = "Paris.",
    model: str = "gpt-4o-mini",
    input_tokens: int = 10,
    output_tokens: int = 3,
    **kwargs: Any,
) -> SpanRecord:
    """A GenAI inference span in the current semantic conventions (content as JSON string attributes)."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": model,
        "gen_ai.response.model": model,
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
    }
    if answer is not None:
        attrs["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
        )
    attrs.update(kwargs.pop("attributes", {}) or {})
    return span(name=f"chat {model}", attributes=attrs, **kwargs)


def log(trace_id: str, span_id: str | None, event_name: str, attributes: dict[str, Any] | None = None,
        body: Any = None) -> LogRecord:
    return LogRecord(
        trace_id=trace_id, span_id=span_id, event_name=event_name, time_unix_nano=1_700_000_000_000_000_000,
        attributes=attributes or {}, body=body, resource={"service.name": "test-service"},
    )
