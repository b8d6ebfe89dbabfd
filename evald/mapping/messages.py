"""Parse every GenAI message shape into evald ``Message``/``ToolCall`` values.

Shapes (standards 1.3, 1.4, 1.8): (1) typed parts in ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
``gen_ai.system_instructions`` (structured or JSON string; tool results under ``response`` or ``result``);
(2) the deprecated per-message events ``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice``, as
span events or as log records (body map or attributes); (3) ``gen_ai.prompt`` / ``gen_ai.completion`` strings
(JSON, Python repr or plain text) and OpenLLMetry's indexed ``gen_ai.prompt.{i}.*``. OpenAI-style
``{role, content, tool_calls}`` dicts are accepted wherever a message is expected; bad items are skipped (never raises).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evald import semconv as sc
from evald.case import Message, ToolCall, new_message, new_tool_call
from evald.frozen import constructor, fast_init
from evald.mapping.sdk_reprs import repr_tool_call
from evald.mapping.values import (
    as_dict,
    as_int,
    as_list,
    as_str,
    as_text,
    is_mapping,
    parse_json_container,
    parse_structured,
    plain,
)
from evald.model import LogRecord, SpanRecord

_TEXT_TYPES: Final = frozenset({"text", "input_text", "output_text"})
_CALL_TYPES: Final = frozenset({"tool_call", "function_call", "tool_use"})
_RESPONSE_TYPES: Final = frozenset({"tool_call_response", "tool_result", "function_call_output"})
_SYSTEM_ROLES: Final = frozenset({"system", "developer"})
_LOOKS_STRUCTURED: Final = re.compile(r"\s*(\[\s*[\[{\"']|\{\s*[\"'}])")


@fast_init
@dataclass(frozen=True, slots=True)
class CallContent:
    """What one inference call sent and received, from whichever capture form was present."""

    input: tuple[Message, ...] = ()
    output: tuple[Message, ...] = ()
    system: str | None = None
    finish_reasons: tuple[str, ...] = ()


new_call_content = constructor(CallContent)  # the hot path's constructor (evald.frozen)


def parse_messages(value: Any, default_role: str = "user") -> list[Message]:
    """Messages from a parts-format or OpenAI-format list (or its JSON / repr string). Plain text becomes one
    message of ``default_role``."""
    if value is None:  # the attribute is absent (the usual case for most sources)
        return []
    parsed = parse_structured(value)
    if is_mapping(parsed):
        nested = parsed.get("messages")
        parsed = nested if isinstance(nested, list) else [parsed]
    if isinstance(parsed, str):
        text = as_text(parsed)
        if not text or _LOOKS_STRUCTURED.match(text):  # truncated or broken JSON is not the user's text
            return []
        return [new_message(default_role, text)]
    if not isinstance(parsed, list):
        return []
    out: list[Message] = []
    for item in parsed:
        if is_mapping(item):
            out.extend(message_from_dict(item, default_role))
        elif isinstance(item, str) and (text := as_text(item)):
            out.append(new_message(default_role, text))
    return out


def parse_system_instructions(value: Any) -> str | None:
    """Text of ``gen_ai.system_instructions`` (an array of parts, a message list, or plain text)."""
    if value is None:
        return None
    parsed = parse_structured(value)
    if isinstance(parsed, str):
        return as_text(parsed)
    items = parsed if isinstance(parsed, list) else [parsed] if is_mapping(parsed) else []
    texts: list[str] = []
    for item in items:
        if is_mapping(item) and ("parts" in item or "role" in item):
            texts.extend(m.content for m in message_from_dict(item, "system") if m.content)
        else:
            _collect_part(item, texts, [], [])
    return "\n".join(texts) or None


def message_from_dict(message: Mapping[str, Any], default_role: str = "user") -> list[Message]:
    """One message dict (parts, OpenAI or event-body form) -> messages; each tool response becomes its own
    ``tool`` message so that it keeps its call id."""
    data = plain(message)
    role = data.get("role")
    role = (as_str(role) if role is not None else None) or default_role
    name = data.get("name")
    if name is not None:
        name = as_str(name)
    texts: list[str] = []
    calls: list[ToolCall] = []
    responses: list[tuple[str | None, str | None]] = []
    parts = data.get("parts")
    if parts is not None:
        parts = parse_structured(parts)
        if isinstance(parts, list):
            for part in parts:
                _collect_part(part, texts, calls, responses)
    content = data.get("content")
    if content == '""':  # a JSON-encoded empty string (OpenLLMetry 0.47 LangChain, on a tool-call turn)
        content = None
    if content is not None:  # None: the parts form (the usual case), nothing to check
        if isinstance(content, str) and role != "tool" and _is_parts(parsed := parse_structured(content)):
            content = parsed  # a JSON-encoded content array such as [{"type": "text", "text": "..."}]
        if isinstance(content, list):
            for part in content:
                _collect_part(part, texts, calls, responses)
        elif is_mapping(content):
            _collect_part(content, texts, calls, responses)
        elif (text := as_text(content)) is not None:
            texts.append(text)
    raw_calls = data.get("tool_calls")
    for raw in (as_list(raw_calls) or []) if raw_calls is not None else ():
        if (call := _openai_tool_call(raw)) is not None:
            calls.append(call)
    text_content = (texts[0] if len(texts) == 1 else "\n".join(texts)) if texts else None
    if not responses:  # a user message answering a tool call (OpenInference Bedrock) is a tool response
        if role == "tool" or (role == "user" and as_str(data.get("tool_call_id"))):
            call_id = as_str(data.get("tool_call_id")) or as_str(data.get("id"))
            return [new_message("tool", text_content, (), call_id, name)]  # positional: no keyword matching
        return [new_message(role, text_content, tuple(calls), None, name)]
    out = [new_message("tool", body, (), cid, name) for cid, body in responses]
    if text_content is not None or calls:
        out.insert(0, new_message(role, text_content, tuple(calls), None, name))
    return out


def _is_parts(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        is_mapping(item) and isinstance(item.get("type"), str) for item in value)


def _collect_part(part: Any, texts: list[str], calls: list[ToolCall], responses: list[tuple[str | None, str | None]]
                  ) -> None:
    if type(part) is not dict:  # parts parsed from JSON or OTLP kvlists are dicts: checked first
        if isinstance(part, str):
            if text := as_text(part):
                texts.append(text)
            return
        if not is_mapping(part):
            return
    _collect_dict_part(plain(part), texts, calls, responses)


def _collect_dict_part(part: dict[str, Any], texts: list[str], calls: list[ToolCall],
                       responses: list[tuple[str | None, str | None]]) -> None:
    kind = part.get("type")
    if not isinstance(kind, str):
        kind = None
    if kind in _TEXT_TYPES or (kind is None and "name" not in part):
        text = as_text(part.get("content"))
        if text is None:
            text = as_text(part.get("text"))
        if text is not None:
            if text.endswith(")") and (call := repr_tool_call(text)) is not None:  # an SDK object's repr
                calls.append(call)
            else:
                texts.append(text)
    elif kind in _CALL_TYPES or kind == "server_tool_call":
        args = next((part[k] for k in ("arguments", "args", "input", "server_tool_call") if k in part), None)
        call_id = as_str(part.get("id")) or as_str(part.get("call_id"))
        calls.append(new_tool_call(name=as_str(part.get("name")) or "", arguments=parse_json_container(args),
                                   id=call_id))
    elif kind in _RESPONSE_TYPES or kind == "server_tool_call_response":
        keys = ("response", "result", "content", "output", "server_tool_call_response")
        body = next((part[k] for k in keys if k in part), None)
        ids = (part.get(k) for k in ("id", "tool_call_id", "tool_use_id", "call_id"))
        responses.append((next((s for s in map(as_str, ids) if s), None), _as_body(body)))
    # reasoning, blob, file, uri and unknown parts carry no evaluable text


def _as_body(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return as_text(value) or value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _openai_tool_call(raw: Any) -> ToolCall | None:
    """``{id, type: "function", function: {name, arguments}}`` or a flat ``{id, name, arguments}``."""
    data = as_dict(raw)
    if data is None:
        return None
    func = as_dict(data.get("function")) or data
    name = as_str(func.get("name"))
    if name is None and "arguments" not in func:
        return None
    return new_tool_call(name=name or "", arguments=parse_json_container(func.get("arguments")),
                         id=as_str(data.get("id")))


def parse_message_events(events: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[list[Message], list[Message]]:
    """Deprecated per-message events (name, payload) -> (input messages, output messages)."""
    inputs: list[Message] = []
    choices: list[tuple[int, int, list[Message]]] = []
    for seq, (name, payload) in enumerate(events):
        if name in sc.INPUT_MESSAGE_EVENTS:
            inputs.extend(message_from_dict(payload, sc.INPUT_MESSAGE_EVENTS[name]))
        elif name == sc.EVENT_CHOICE:
            message = dict(as_dict(payload.get("message")) or {})
            if "tool_calls" in payload and not message.get("tool_calls"):
                message["tool_calls"] = payload.get("tool_calls")
            if "content" not in message and "content" in payload:
                message["content"] = payload.get("content")
            index = as_int(payload.get("index"))
            choices.append((index if index is not None else seq, seq, message_from_dict(message, "assistant")))
        elif name == sc.EVENT_CONTENT_PROMPT:
            inputs.extend(parse_messages(payload.get(sc.PROMPT)))
        elif name == sc.EVENT_CONTENT_COMPLETION:
            choices.append((seq, seq, parse_messages(payload.get(sc.COMPLETION), "assistant")))
    return inputs, [m for _, _, msgs in sorted(choices, key=lambda c: (c[0], c[1])) for m in msgs]


def event_payload(attributes: Mapping[str, Any], body: Any) -> dict[str, Any]:
    """Merge a log record's body map over its attributes (a string body counts as ``content``)."""
    payload = dict(attributes)
    parsed = parse_structured(body)
    if is_mapping(parsed):
        payload.update({str(k): v for k, v in parsed.items()})
    elif isinstance(parsed, str) and "content" not in payload:
        payload["content"] = parsed
    return payload


def parse_indexed(attributes: Mapping[str, Any], prefix: str, default_role: str) -> list[Message]:
    """OpenLLMetry's flattened ``{prefix}{i}.role|content|tool_call_id`` and ``{prefix}{i}.tool_calls.{j}.*``."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in plain(attributes).items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix):].partition(".")
        if not head.isdigit() or not rest:
            continue
        row = rows.setdefault(int(head), {})
        call_index, _, field = rest.removeprefix("tool_calls.").partition(".")
        if rest.startswith("tool_calls.") and call_index.isdigit() and field:
            row.setdefault("tool_calls", {}).setdefault(int(call_index), {})[field] = value
        else:
            row[rest] = value
    out: list[Message] = []
    for _, row in sorted(rows.items()):
        calls = row.pop("tool_calls", {})
        row["tool_calls"] = [calls[j] for j in sorted(calls)]
        out.extend(message_from_dict(row, default_role))
    return out


def call_content(span: SpanRecord, logs: Sequence[LogRecord] = ()) -> CallContent:
    """Input, output and system prompt of one span, first found in the order of standards 1.8: message
    attributes on the span, then on its log records, then per-message events, then the legacy prompt forms."""
    attrs = plain(span.attributes)
    events: list[tuple[str, Mapping[str, Any]]] = []
    sources: list[dict[str, Any]] = [attrs]
    if logs or span.events:  # else the span's attributes are the only source (the usual case): no events to read
        payloads = [event_payload(log.attributes, log.body) for log in logs]
        events = [(e.name, e.attributes) for e in span.events]
        events += [(log.event_name or as_str(p.get("event.name")) or "", p)
                   for log, p in zip(logs, payloads, strict=True)]
        sources += [*(plain(e.attributes) for e in span.events if e.name == sc.EVENT_INFERENCE_DETAILS), *payloads]
    ev_in, ev_out = parse_message_events(events) if events else ([], [])
    inputs = (_first_nonempty(sources, sc.INPUT_MESSAGES, "user") or ev_in
              or parse_indexed(attrs, sc.PROMPT_PREFIX, "user") or parse_messages(attrs.get(sc.PROMPT)))
    raw_outputs = [parse_structured(s.get(sc.OUTPUT_MESSAGES)) for s in sources]  # parsed once, read twice
    outputs: list[Message] = []
    for raw in raw_outputs:
        if outputs := parse_messages(raw, "assistant"):
            break
    if not any(m.content or m.tool_calls for m in outputs):  # none or empty (LiteLLM: calls in the indexed form only)
        outputs = (ev_out or parse_indexed(attrs, sc.COMPLETION_PREFIX, "assistant")
                   or parse_messages(attrs.get(sc.COMPLETION), "assistant") or outputs)
    system: str | None = None
    for source in sources:
        if system := parse_system_instructions(source.get(sc.SYSTEM_INSTRUCTIONS)):
            break
    if system is None:
        system = "\n".join(m.content for m in inputs if m.role in _SYSTEM_ROLES and m.content) or None
    reasons = _finish_reasons(raw_outputs, events)
    return new_call_content(tuple(inputs), tuple(outputs), system, reasons)


def _first_nonempty(sources: Sequence[dict[str, Any]], key: str, default_role: str) -> list[Message]:
    """The messages of the first source whose ``key`` attribute holds any."""
    for source in sources:
        if found := parse_messages(source.get(key), default_role):
            return found
    return []


def _finish_reasons(raw_outputs: Sequence[Any], events: Sequence[tuple[str, Mapping[str, Any]]]
                    ) -> tuple[str, ...]:
    for raw in raw_outputs:
        if isinstance(raw, list):
            reasons = [r for item in raw if is_mapping(item) and (r := as_str(item.get("finish_reason")))]
            if reasons:
                return tuple(reasons)
    return tuple(r for name, p in events if name == sc.EVENT_CHOICE and (r := as_str(p.get("finish_reason"))))


def text_of(messages: Iterable[Message], roles: frozenset[str] | None = None, last: bool = False) -> str | None:
    """The first (or ``last``) message text whose role is in ``roles`` (any if None), stripped (Strands' ends in \n)."""
    for m in reversed(tuple(messages)) if last else messages:
        if m.content and (roles is None or m.role in roles) and (text := m.content.strip()):
            return text
    return None


def is_system_role(role: str) -> bool:
    return role in _SYSTEM_ROLES
