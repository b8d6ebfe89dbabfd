"""Pieces every span mapper uses to build its cases: call texts, evaluability, summed usage, extent, ancestry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from evald.case import SPAN_END_METADATA, Message, ToolCall, new_message, new_tool_call
from evald.mapping.messages import CallContent, is_system_role, text_of
from evald.mapping.values import as_text, is_mapping, parse_json_container, plain
from evald.model import SpanRecord
from evald.span_reads import service_name

_N = TypeVar("_N", int, float)
#: bound once: compiled, a builtin without a primitive (``sum``) is a builtins-module attribute lookup per call
_SUM: Final = sum
#: where retrievers that have no document score / id of their own put them (LangChain: Document.metadata)
SCORE_KEYS: Final = ("score", "relevance_score", "similarity_score", "_score")
ID_KEYS: Final = ("id", "doc_id", "document_id", "_id")
_USER: Final = frozenset({"user"})
_OUTPUT_ROLES: Final = frozenset({"assistant", "model"})


def call_texts(content: CallContent) -> tuple[str | None, str | None, tuple[ToolCall, ...], tuple[Message, ...]]:
    """What a model call's cases read from its content: the input (the last user message), the output (assistant
    text, else any text), the tool calls it requested, and its messages (system prompt first when not in them)."""
    input_text = text_of(content.input, _USER, last=True)
    output_text = text_of(content.output, _OUTPUT_ROLES) or text_of(content.output)
    requested = tuple(c for m in content.output for c in m.tool_calls)
    system, inputs = content.system, content.input
    head = (new_message("system", system),) if system and not any(is_system_role(m.role) for m in inputs) else ()
    return input_text, output_text, requested, (*head, *inputs, *content.output)


def sum_known(values: Iterable[_N | None]) -> _N | None:
    """The sum of the known values; ``None`` (unknown, not 0) when none is known."""
    known = [v for v in values if v is not None]
    return _SUM(known) if known else None


def case_service_name(anchor: SpanRecord, spans: Sequence[SpanRecord]) -> str | None:
    """A trace case's service: the anchor span's ``service.name``, else the first span's that has one."""
    if name := service_name(anchor):
        return name
    for span in spans:
        if name := service_name(span):
            return name
    return None


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
    spans = plain(by_id)  # compiled: direct dict reads
    chain = [span]
    seen = {span.span_id}
    while (parent := spans.get(span.parent_span_id or "")) is not None:
        parent_id = parent.span_id
        if parent_id in seen:
            break
        seen.add(parent_id)
        chain.append(parent)
        span = parent
    return chain


def extent_ms(spans: Iterable[SpanRecord]) -> float | None:
    """First start to last end of the timed spans, in milliseconds; ``None`` when no span is timed."""
    timed = [s for s in spans if s.end_time_unix_nano >= s.start_time_unix_nano > 0]
    if not timed:
        return None
    return (max(s.end_time_unix_nano for s in timed) - min(s.start_time_unix_nano for s in timed)) / 1e6


def answered_model(response_model: str | None, request_model: str | None, failed: bool) -> str | None:
    """The model of a trace case: the last call's response model, else (an emitter that records only the request
    model: Strands, Semantic Kernel, ...) the model the call asked for, if it answered."""
    return response_model or (None if failed else request_model)


def tool_result(value: Any) -> Any:
    """A tool result: JSON containers parsed, text with escapes decoded, other values as they are; a list of text
    content blocks (``[{"type": "text", "text": ...}]`` or ``[{"text": ...}]``: Anthropic, Bedrock, Strands) is
    read as its text, a single Bedrock ``[{"json": ...}]`` block as its value."""
    parsed = parse_json_container(value)
    if isinstance(parsed, (str, bytes)):
        return as_text(parsed) or parsed  # a marker never gets here: parse_json_container made it None
    if isinstance(parsed, list) and parsed and all(_is_text_block(b) for b in parsed):
        return tool_result("\n".join(b["text"] for b in parsed))
    if isinstance(parsed, list) and len(parsed) == 1 and is_mapping(parsed[0]) and parsed[0].keys() == {"json"}:
        return parsed[0]["json"]  # a Bedrock Converse toolResult content block: [{"json": {...}}]
    return parsed


def _is_text_block(block: Any) -> bool:
    return (is_mapping(block) and isinstance(block.get("text"), str) and block.keys() <= {"type", "text"}
            and block.get("type", "text") == "text")


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
        if old is None and call.id and key == call.id and (anonymous := self._anonymous(call)) is not None:
            self._rekey(anonymous, call.id)  # seen first without its id (LiteLLM's OTel callback), now with it
            old = self.calls[call.id]
        if key is None or (old is None and not create):
            return None
        self.calls[key] = call if old is None else new_tool_call(  # every field of ToolCall, merged
            name=old.name or call.name, id=old.id or call.id, error=old.error or call.error,
            arguments=old.arguments if old.arguments is not None else call.arguments,
            result=old.result if old.result is not None else call.result)
        return key

    def _anonymous(self, call: ToolCall) -> str | None:
        """The key of an id-less entry for the same call (same name and arguments), if any."""
        return next((k for k, v in self.calls.items()
                     if v.id is None and v.name == call.name and v.arguments == call.arguments), None)

    def _rekey(self, old_key: str, new_key: str) -> None:
        self.calls = {(new_key if k == old_key else k): v for k, v in self.calls.items()}
        if old_key in self._executed:
            self._executed.discard(old_key)
            self._executed.add(new_key)

    def resolve(self, call: ToolCall) -> ToolCall:
        """The merged entry of a requested call (with its result), or the call itself."""
        return self.calls.get(call.id, call) if call.id else call

    def add_call(self, inputs: Sequence[Message], requested: Iterable[ToolCall]) -> None:
        """A model call: in its input, the tool calls of the current turn (after the last user message; earlier
        turns only complete known ids) and the tool responses; then the tool calls its output requested."""
        turn = -1  # the last user message (loops, not generators: compiled, a generator is an object per call)
        for i, message in enumerate(inputs):
            if message.role == "user":
                turn = i
        unanswered: list[str] = []  # call ids of the last message that requested calls, not yet answered
        for i, message in enumerate(inputs):
            calls = message.tool_calls
            if calls:  # their ledger keys: the id, else the id-less entry of the same call
                unanswered = [k for c in calls if (k := c.id or self._anonymous(c))]
                for call in calls:
                    if call.id:
                        self.add(call, create=i > turn)
            if message.role == "tool" and message.content is not None:
                self._add_response(message, unanswered)
        for call in requested:
            self.add(call)

    def _add_response(self, message: Message, unanswered: list[str]) -> None:
        """A tool response completes its call: by id; an id-less one by name (the first open call of that name);
        one whose id matches no call, or that has neither id nor name, answers the next unanswered call of the
        message that requested them (OpenLLMetry's Responses API spans put the item id on the call and the call
        id on the result; OpenInference LiteLLM records no id)."""
        result = tool_result(message.content)
        call_id = message.tool_call_id
        if call_id is None and message.name and (key := self._open(message.name)) is not None:
            if key in unanswered:
                unanswered.remove(key)
            self.add(new_tool_call(message.name, result=result), key=key)
            return
        if call_id is not None and call_id in unanswered:
            unanswered.remove(call_id)
        elif (call_id is None or call_id not in self.calls) and unanswered:
            self.add(new_tool_call("", result=result), key=unanswered.pop(0), create=False)
            return
        if call_id is not None:
            self.add(new_tool_call("", result=result, id=call_id), create=False)

    def add_executed(self, call: ToolCall) -> None:
        """A tool span: merge by id, else complete the first open call of the same name, else append. A span whose
        id matches no call completes the first not-yet-executed call of the same name and arguments (Google ADK
        gives the span its own id, adk-<uuid>, and the model's call another)."""
        key: str | None = None
        if not call.id:
            key = self._open(call.name)
        elif call.id not in self.calls:
            key = self._unexecuted(call)
        key = self.add(call, key=key)
        if key is not None:
            self._executed.add(key)

    def _unexecuted(self, call: ToolCall) -> str | None:
        """The first call of the same name and arguments that no tool span has completed yet."""
        return next((k for k, v in self.calls.items() if k not in self._executed and v.name == call.name
                     and (call.arguments is None or v.arguments == call.arguments)), None)

    def _open(self, name: str) -> str | None:
        return next((k for k, v in self.calls.items()
                     if k not in self._executed and v.result is None and v.name == name), None)
