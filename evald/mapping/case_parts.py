"""Pieces every span mapper uses to build its cases: call texts, evaluability, summed usage, extent, ancestry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from evald.case import SPAN_END_METADATA, Message, ToolCall, new_message, new_tool_call
from evald.mapping.messages import CallContent, is_system_role, text_of
from evald.mapping.values import as_text, parse_json_container
from evald.model import SpanRecord

_N = TypeVar("_N", int, float)
#: where retrievers that have no document score / id of their own put them (LangChain: Document.metadata)
SCORE_KEYS = ("score", "relevance_score", "similarity_score", "_score")
ID_KEYS = ("id", "doc_id", "document_id", "_id")
_USER = frozenset({"user"})
_OUTPUT_ROLES = frozenset({"assistant", "model"})


def call_texts(content: CallContent) -> tuple[str | None, str | None, tuple[ToolCall, ...], tuple[Message, ...]]:
    """What a model call's cases read from its content: the input (the last user message), the output (assistant
    text, else any text), the tool calls it requested, and its messages (system prompt first when not in them)."""
    input_text = text_of(content.input, _USER, last=True)
    output_text = text_of(content.output, _OUTPUT_ROLES) or text_of(content.output)
    requested = tuple(c for m in content.output for c in m.tool_calls)
    system, inputs = content.system, content.input
    head = (new_message("system", system),) if system and not any(is_system_role(m.role) for m in inputs) else ()
    return input_text, output_text, requested, (*head, *inputs, *content.output)


def not_evaluable_reason(user_input: object, output: object, error: bool) -> str | None:
    """``no_input``, ``no_output`` (a failed call without output stays evaluable) or ``None``."""
    if not user_input:
        return "no_input"
    if not output and not error:
        return "no_output"
    return None


def sum_known(values: Iterable[_N | None]) -> _N | None:
    """The sum of the known values; ``None`` (unknown, not 0) when none is known."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def span_end(span: SpanRecord) -> dict[str, int]:
    """The case metadata naming the evaluated span's end time (``span_end_unix_nano``; exporters stamp scores with it,
    so a re-delivered evaluation upserts), empty when the span has no end time."""
    end = span.end_time_unix_nano
    return {SPAN_END_METADATA: end} if end > 0 else {}


def present(**values: str | None) -> dict[str, str]:
    """The given values that are not ``None``."""
    return {k: v for k, v in values.items() if v is not None}


def lineage(span: SpanRecord, by_id: Mapping[str, SpanRecord]) -> list[SpanRecord]:
    """The span and its ancestors present in the trace, nearest first (cycle-safe; a missing parent ends it)."""
    chain = [span]
    seen = {span.span_id}
    while (parent := by_id.get(chain[-1].parent_span_id or "")) is not None and parent.span_id not in seen:
        seen.add(parent.span_id)
        chain.append(parent)
    return chain


def extent_ms(spans: Iterable[SpanRecord]) -> float | None:
    """First start to last end of the timed spans, in milliseconds; ``None`` when no span is timed."""
    timed = [s for s in spans if s.end_time_unix_nano >= s.start_time_unix_nano > 0]
    if not timed:
        return None
    return (max(s.end_time_unix_nano for s in timed) - min(s.start_time_unix_nano for s in timed)) / 1e6


def tool_result(value: Any) -> Any:
    """A tool result: JSON containers parsed, text with escapes decoded, other values as they are."""
    parsed = parse_json_container(value)
    if isinstance(parsed, str):
        return as_text(parsed) or parsed
    return parsed


class ToolLedger:
    """Every tool call of a trace in first-seen order, one entry per call id (id-less calls get a position key);
    a convention's ledger adds how its messages and spans feed it."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        self._executed: set[str] = set()

    def add(self, call: ToolCall, create: bool = True, key: str | None = None) -> str | None:
        """Merge ``call`` into the entry of ``key`` (default: its id), completing what the entry lacks; a new entry
        only with ``create``. Returns the entry's key, or None when nothing was added."""
        key = key or call.id or (f"#{len(self.calls)}" if create else None)
        old = self.calls.get(key) if key else None
        if key is None or (old is None and not create):
            return None
        self.calls[key] = call if old is None else new_tool_call(  # every field of ToolCall, merged
            name=old.name or call.name, id=old.id or call.id, error=old.error or call.error,
            arguments=old.arguments if old.arguments is not None else call.arguments,
            result=old.result if old.result is not None else call.result)
        return key

    def resolve(self, call: ToolCall) -> ToolCall:
        """The merged entry of a requested call (with its result), or the call itself."""
        return self.calls.get(call.id, call) if call.id else call

    def add_call(self, inputs: Sequence[Message], requested: Iterable[ToolCall]) -> None:
        """A model call: in its input, the tool calls of the current turn (after the last user message; earlier
        turns only complete known ids) and the tool responses (one whose id matches no call answers the next
        unanswered call of the message that requested them); then the tool calls its output requested."""
        turn = max((i for i, m in enumerate(inputs) if m.role == "user"), default=-1)
        unanswered: list[str] = []  # call ids of the last message that requested calls, not yet answered
        for i, message in enumerate(inputs):
            if message.tool_calls:
                unanswered = [c.id for c in message.tool_calls if c.id]
            for call in (c for c in message.tool_calls if c.id):
                self.add(call, create=i > turn)
            if message.role == "tool" and message.tool_call_id and message.content is not None:
                call_id = message.tool_call_id
                if call_id in unanswered:
                    unanswered.remove(call_id)
                elif call_id not in self.calls and unanswered:  # ids that do not line up (OpenLLMetry's Responses
                    call_id = unanswered.pop(0)  # API spans: item id on the call, call id on the result): in order
                self.add(new_tool_call("", result=tool_result(message.content), id=call_id), create=False)
        for call in requested:
            self.add(call)

    def add_executed(self, call: ToolCall) -> None:
        """A tool span: merge by id, else complete the first open call of the same name, else append."""
        key = self.add(call, key=None if call.id else self._open(call.name))
        if key is not None:
            self._executed.add(key)

    def _open(self, name: str) -> str | None:
        return next((k for k, v in self.calls.items()
                     if k not in self._executed and v.result is None and v.name == name), None)
