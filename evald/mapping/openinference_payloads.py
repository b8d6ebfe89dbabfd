"""Read OpenInference ``input.value`` / ``output.value`` payloads: the user's text, the answer, messages, models.

The value is plain text (``*.mime_type`` ``text/plain`` or absent) or JSON (``application/json``; a Python-repr
string is accepted too). JSON payloads seen from instrumentations: an OpenAI request/response body
(``{"model", "messages"}`` / ``{"choices": [{"message"}]}``), an Anthropic message (``{"role", "content": [parts]}``),
LangChain runs (``{"messages": [[serialized messages]]}``, ``{"generations": [[{"text", "message"}]]}``, message
dumps ``{"type": "ai", "data": {...}}`` or ``{"lc": 1, "kwargs": {...}}``, chain dicts ``{"input"|"question"|...}``
and ``{"output"|"answer"|...}``) and LangGraph state (``{"messages": [...]}``, tuples ``["user", "hi"]``).
Unknown shapes give ``None`` (callers fall back to other sources); nothing raises on bad data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evald.case import Message
from evald.mapping.messages import message_from_dict
from evald.mapping.openinference_fields import (
    INPUT_MIME_TYPE,
    INPUT_VALUE,
    OUTPUT_MIME_TYPE,
    OUTPUT_VALUE,
    normalize_role,
)
from evald.mapping.values import as_str, as_text, is_mapping, is_object_repr, parse_structured, plain

_QUESTION_KEYS: Final = ("input", "question", "query", "user_input", "prompt", "message", "text", "content",
                         "request", "task", "inputs")
_ANSWER_KEYS: Final = ("output", "answer", "result", "response", "final_output", "text", "content", "generation",
                       "completion", "outputs", "return_values")
_MAX_DEPTH: Final = 6


def payload(attrs: Mapping[str, Any], which: str) -> Any:
    """``{which}.value`` as Python data: parsed unless the mime type says plain text; ``None`` for a value declared
    JSON that does not parse (emitters truncate long values)."""
    data = plain(attrs)  # compiled: dict reads, and the keys are constants (no f-string per read)
    if which == "input":
        value_key, mime_key = INPUT_VALUE, INPUT_MIME_TYPE
    elif which == "output":
        value_key, mime_key = OUTPUT_VALUE, OUTPUT_MIME_TYPE
    else:
        value_key, mime_key = f"{which}.value", f"{which}.mime_type"
    value = data.get(value_key)
    if value is None or isinstance(value, (dict, list)):
        return value
    mime = as_str(data.get(mime_key))
    if mime is not None and "json" not in mime.lower():
        return as_text(value)
    parsed = parse_structured(value)
    if isinstance(parsed, (str, bytes)):
        text = as_text(parsed)
        if text is not None and mime is not None and text.lstrip()[:1] in ("{", "["):
            return None  # declared JSON that does not parse (truncated): not usable as text
        return text
    return parsed


def message_dict(item: Any) -> dict[str, Any] | None:
    """Any serialized chat message (OpenAI, LangChain constructor/dump/template, tuple) as an OpenAI-style dict."""
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        return {"role": normalize_role(item[0]), "content": item[1]}
    if not is_mapping(item):
        return None
    kwargs, data = item.get("kwargs"), item.get("data")
    if is_mapping(kwargs) and "lc" in item:
        ident = item.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else None
        body, role = kwargs, kwargs.get("role") or kwargs.get("type") or _class_role(cls)
    elif is_mapping(data) and isinstance(item.get("type"), str):
        body, role = data, data.get("role") or item.get("type")
    else:
        body, role = item, item.get("role") or item.get("type")
    role_name = normalize_role(role)
    if role_name is not None and role_name.endswith("messagechunk"):
        role_name = _class_role(role_name)
    out: dict[str, Any] = {"role": role_name, "content": body.get("content"), "name": body.get("name"),
                           "tool_call_id": body.get("tool_call_id")}
    calls = body.get("tool_calls")
    extra = body.get("additional_kwargs")
    if not calls and is_mapping(extra):
        calls = extra.get("tool_calls")
    out["tool_calls"] = [_tool_call(c) for c in calls if is_mapping(c)] if isinstance(calls, list) else []
    return out


def _class_role(cls: str | None) -> str | None:
    if not cls:
        return None
    key = cls.lower()
    for prefix, role in (("human", "user"), ("ai", "assistant"), ("system", "system"), ("tool", "tool"),
                         ("function", "function"), ("chat", "user")):
        if key.startswith(prefix):
            return role
    return key


def _tool_call(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """LangChain ``{"name", "args", "id"}`` -> OpenAI ``{"id", "function": {"name", "arguments"}}``."""
    if "args" in call and "function" not in call:
        return {"id": call.get("id"), "function": {"name": call.get("name"), "arguments": call.get("args")}}
    return call


def messages_of(value: Any, default_role: str = "user") -> list[Message]:
    """Messages of a payload: ``{"messages": [...]}`` (a LangChain batch ``[[...]]`` gives its first prompt) or a
    list of message-like items."""
    value = parse_structured(value)
    if is_mapping(value):
        value = value.get("messages")
    if isinstance(value, list) and value and isinstance(value[0], list) and value[0] and not isinstance(
            value[0][0], str):
        value = value[0]
    if not isinstance(value, list):
        return []
    out: list[Message] = []
    for item in value:
        data = message_dict(item)
        if data is not None and ("content" in item or "kwargs" in item or "data" in item or "role" in item
                                 or isinstance(item, (list, tuple))):
            out.extend(message_from_dict(data, data.get("role") or default_role))
    return out


def output_messages_of(value: Any) -> list[Message]:
    """Assistant messages of a response payload (OpenAI chat choices or Responses ``output`` items, LangChain
    generations, an Anthropic message, a ``messages`` list)."""
    parsed = parse_structured(value)
    if isinstance(parsed, str):  # a default object repr (<groq.Stream object at 0x...>) is no output
        return [Message("assistant", t)] if (t := as_text(parsed)) and not is_object_repr(t) else []
    if not is_mapping(parsed):
        return []
    body = plain(parsed)
    out: list[Message] = []
    choices = body.get("choices")
    for choice in choices if isinstance(choices, list) else []:
        if not is_mapping(choice):
            continue
        if (data := message_dict(choice.get("message"))) is not None:
            out.extend(message_from_dict(data, "assistant"))
        elif text := as_text(choice.get("text")):
            out.append(Message("assistant", text))
    for generation in _first_generations(body):
        if (data := message_dict(generation.get("message"))) is not None:
            out.extend(message_from_dict({**data, "role": data.get("role") or "assistant"}, "assistant"))
        elif text := as_text(generation.get("text")):
            out.append(Message("assistant", text))
    items = body.get("output")
    for item in items if not out and isinstance(items, list) else []:  # an OpenAI Responses body
        if is_mapping(item) and item.get("type") in ("function_call", "tool_call", "tool_use"):
            out.extend(message_from_dict({"role": "assistant", "content": [item]}, "assistant"))
        elif (data := message_dict(item)) is not None and data.get("role") == "assistant":
            out.extend(message_from_dict(data, "assistant"))
    if not out and normalize_role(body.get("role")) == "assistant":
        out.extend(message_from_dict(body, "assistant"))
    if not out and "messages" in body:
        out = [m for m in messages_of(body, "assistant") if m.role == "assistant"][-1:]
    return out


def _first_generations(value: dict[str, Any]) -> list[Mapping[str, Any]]:
    generations = value.get("generations")
    if not isinstance(generations, list) or not generations:
        return []
    first = generations[0] if isinstance(generations[0], list) else generations
    return [g for g in first if is_mapping(g)]


def user_text(value: Any, depth: int = 0) -> str | None:
    """The user's text in an input payload: plain text, the last user message, or a question-like field."""
    if depth > _MAX_DEPTH:
        return None
    value = parse_structured(value)
    if isinstance(value, str):  # a framework object's repr (smolagents' ActionStep(...)) is no question
        return None if is_object_repr(value) else as_text(value)
    if isinstance(value, list):
        found = [m.content for m in messages_of(value) if m.role == "user" and m.content]
        if found:
            return found[-1]
        texts = [t for v in value if (t := as_text(v))]
        return texts[0] if len(texts) == 1 and len(value) == 1 else None
    if not is_mapping(value):
        return None
    if "messages" in value:
        found = [m.content for m in messages_of(value) if m.role == "user" and m.content]
        if found:
            return found[-1]
    for key in _QUESTION_KEYS:
        if key in value and (text := user_text(value[key], depth + 1)):
            return text
    return _single_text(value)


def answer_text(value: Any, depth: int = 0) -> str | None:
    """The answer in an output payload: plain text, a response body's assistant text, or an answer-like field."""
    if depth > _MAX_DEPTH:
        return None
    value = parse_structured(value)
    if isinstance(value, str):  # a framework object's repr (LlamaIndex workflows: StopEvent(...)) is no answer
        return None if is_object_repr(value) else as_text(value)
    if isinstance(value, list):
        found = [m.content for m in messages_of(value, "assistant") if m.role == "assistant" and m.content]
        return found[-1] if found else None
    if not is_mapping(value):
        return None
    texts = [m.content for m in output_messages_of(value) if m.content and m.role == "assistant"]
    if texts:
        return texts[-1]
    if (data := message_dict(value)) is not None and data.get("role") == "assistant":
        return next((m.content for m in message_from_dict(data, "assistant") if m.content), None)
    for key in _ANSWER_KEYS:
        if key in value and (text := answer_text(value[key], depth + 1)):
            return text
    return _single_text(value)


def _single_text(value: Mapping[str, Any]) -> str | None:
    texts = [t for v in value.values() if isinstance(v, str) and (t := as_text(v)) and not is_object_repr(t)]
    return texts[0] if len(texts) == 1 and len(value) == 1 else None


def response_info(value: Any) -> tuple[str | None, str | None]:
    """(response model, response id) from a response body: OpenAI/Anthropic ``model``/``id``, LangChain
    ``llm_output`` / ``generation_info`` / message ``response_metadata``."""
    parsed = parse_structured(value)
    if not is_mapping(parsed):
        return None, None
    data = plain(parsed)
    model = as_str(data.get("model"))
    response_id = as_str(data.get("id")) if model else None
    sources: list[Any] = [data.get("llm_output")]
    for generation in _first_generations(data)[:1]:
        message = generation.get("message")
        body = message.get("kwargs") or message.get("data") if is_mapping(message) else None
        sources += [generation.get("generation_info"),
                    body.get("response_metadata") if is_mapping(body) else None]
    for source in sources:
        if not is_mapping(source):
            continue
        model = model or as_str(source.get("model_name")) or as_str(source.get("model"))
        response_id = response_id or as_str(source.get("id"))
    return model, response_id
