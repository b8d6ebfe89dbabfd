"""Decode Traceloop entity payloads (``traceloop.entity.input`` / ``traceloop.entity.output``).

Shapes seen in OpenLLMetry emitters: the SDK decorators write ``{"args": [...], "kwargs": {...}}`` and the raw
JSON of the return value (a method's ``self`` serialises as its class name); the LangChain instrumentation writes
``{"inputs": ..., "tags", "metadata", "kwargs"}`` / ``{"outputs": ..., "kwargs"}`` for chains and
``{"input_str", "inputs", ...}`` / ``{"output": ..., "kwargs"}`` for tools, with LangChain objects as
``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}`` and pydantic models as nested
JSON strings. :func:`decode` normalises all of that; :func:`question_of`, :func:`answer_of` and :func:`tool_io`
pick the user's question, the final answer and a tool's arguments/result. Nothing here raises: unknown shapes give
``None``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from evald.case import Message
from evald.mapping.case_parts import tool_result
from evald.mapping.messages import message_from_dict, text_of
from evald.mapping.values import (
    STRUCTURED_INITIALS,
    as_str,
    as_text,
    is_mapping,
    parse_json_container,
    parse_structured,
    plain,
)

_MAX_DEPTH: Final = 12
LC_CLASS: Final = "__lc__"  # key decode() adds to an unwrapped LangChain constructor: the class name
# text-valued keys whose strings stay strings (document text such as "[kb-1] ..." is not JSON to parse)
_TEXT_KEYS: Final = frozenset({"content", "text", "page_content", "document", "input_str", "question", "query",
                               "answer"})
_LC_ROLES: Final = {"HumanMessage": "user", "HumanMessageChunk": "user", "AIMessage": "assistant",
                    "AIMessageChunk": "assistant", "SystemMessage": "system", "SystemMessageChunk": "system",
                    "ToolMessage": "tool", "ToolMessageChunk": "tool", "FunctionMessage": "tool"}
_TYPE_ROLES: Final = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant",
                      "system": "system", "tool": "tool", "developer": "system"}
_QUESTION_KEYS: Final = ("question", "query", "user_input", "user_query", "user_question", "input", "prompt",
                         "user_message", "message", "text", "q", "content", "request", "task")
_ANSWER_KEYS: Final = ("answer", "final_answer", "output", "response", "result", "output_text", "text", "content",
                       "completion", "reply", "message", "generation", "replies")
_INPUT_WRAPPERS: Final = ("inputs", "kwargs", "args", "input_str")
_OUTPUT_WRAPPERS: Final = ("outputs", "output", "return_values")
_META_KEYS: Final = frozenset({"tags", "metadata", "callbacks", "run_id", "parent_run_id", "name", LC_CLASS})
_IDENTIFIER: Final = re.compile(r"^[A-Za-z_][\w.\-]*$")


def decode(value: Any, depth: int = 0) -> Any:
    """Parse JSON (also double-encoded) strings and unwrap LangChain constructors, recursively (bounded)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, (bytes, bytearray)):
        value = as_text(value)
    if isinstance(value, str):
        if not value:
            return value
        first = value[0]
        if first not in STRUCTURED_INITIALS and not first.isspace():  # what parse_structured would leave as it is
            return value
        parsed = parse_structured(value)
        if isinstance(parsed, str):
            return value if parsed == value else decode(parsed, depth + 1)
        return decode(parsed, depth + 1)
    if is_mapping(value):
        data = _str_keyed(value)
        kwargs = data.get("kwargs")
        if data.get("type") == "constructor" and "lc" in data and is_mapping(kwargs):
            ids = data.get("id")
            cls = ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else ""
            inner = {k: _decode_field(k, v, depth) for k, v in _str_keyed(kwargs).items()}
            inner[LC_CLASS] = cls
            return inner
        if "_role" in data and isinstance(parts := data.get("_content"), list):  # a Haystack ChatMessage's fields
            return {"role": data["_role"], "content": [p for p in parts if is_mapping(p) and "text" in p]}
        return {k: _decode_field(k, v, depth) for k, v in data.items()}
    if isinstance(value, (list, tuple)):
        return [decode(v, depth + 1) for v in value]
    return value


def _str_keyed(value: Mapping[Any, Any]) -> dict[str, Any]:
    """``{str(k): v for k, v in value.items()}``; the dict itself (not a copy: decode only reads it) when it is a
    plain dict with str keys only (what JSON gives), so that compiled code reads it as a dict."""
    if type(value) is dict:
        data: dict[Any, Any] = value
        for key in data:
            if type(key) is not str:
                break
        else:
            return data
    return {str(k): v for k, v in value.items()}


#: a trace's decoded payloads by the identity of their raw value (which the entry keeps alive): the trace case reads
#: an entity span's payload for its question or answer and again for its documents
DecodeMemo = dict[int, tuple[Any, Any]]


def decode_once(raw: Any, memo: DecodeMemo | None) -> Any:
    """``decode(raw)``, computed once per raw value in ``memo`` (the result is shared: its readers only read it)."""
    if memo is None or raw is None:
        return decode(raw)
    key = id(raw)
    hit = memo.get(key)
    if hit is not None and hit[0] is raw:
        return hit[1]
    value = decode(raw)
    memo[key] = (raw, value)
    return value


def _decode_field(key: str, value: Any, depth: int) -> Any:
    if key in _TEXT_KEYS and isinstance(value, str):
        return value
    return decode(value, depth + 1)


def message_dict(item: Any) -> dict[str, Any] | None:
    """An OpenAI-style message dict from a decoded chat message (role/content dict, LangChain message, or a
    ``[role, text]`` pair); None when the item is not a message."""
    if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
        role = _TYPE_ROLES.get(item[0].strip().lower())
        return {"role": role, "content": item[1]} if role else None
    if not is_mapping(item):
        return None
    data = plain(item)  # read as a dict (compiled: direct calls); its keys are iterated as they are below
    role = as_str(data.get("role"))
    if role is None:
        cls = data.get(LC_CLASS)
        kind = data.get("type")
        role = _LC_ROLES.get(cls) if isinstance(cls, str) and cls else (
            _TYPE_ROLES.get(kind) if isinstance(kind, str) and "content" in data else None)
        if role is None:
            return None
    out = {k: v for k, v in item.items() if k != LC_CLASS}
    out["role"] = role
    calls = data.get("tool_calls")
    if isinstance(calls, list):  # LangChain: {"name", "args", "id"}; OpenAI: {"id", "function": {...}}
        out["tool_calls"] = [{**c, "arguments": c["args"]} if is_mapping(c) and "args" in c
                             and "arguments" not in c else c for c in calls]
    return out


def messages_in(value: Any) -> list[Message] | None:
    """Messages when ``value`` is a message or a list of messages only (else None)."""
    items = value if isinstance(value, list) else [value]
    dicts = [d for item in items if (d := message_dict(item)) is not None]
    if not dicts or len(dicts) != len(items):
        return None
    out: list[Message] = []
    for data in dicts:
        out.extend(message_from_dict(data))
    return out


def question_of(raw: Any, memo: DecodeMemo | None = None) -> str | None:
    """The user's question in an entity input (known argument names first, then the first free-text argument)."""
    return _find(decode_once(_non_scalar(raw), memo), _QUESTION_KEYS, _INPUT_WRAPPERS, frozenset({"user"}), 0)


def answer_of(raw: Any, memo: DecodeMemo | None = None) -> str | None:
    """The final answer text in an entity output (a string, an answer-like field, or the last assistant message)."""
    return _find(decode_once(_non_scalar(raw), memo), _ANSWER_KEYS, _OUTPUT_WRAPPERS,
                 frozenset({"assistant", "model"}), 0, answer=True)


def _non_scalar(raw: Any) -> Any:
    """None for a payload holding a JSON number/bool/null (the SDK writes ``json.dumps(result)``: a text result is
    quoted, ``42`` is the number); other values unchanged."""
    if isinstance(raw, str) and len(raw) < 64 and raw.strip()[:1] not in ("", "[", "{", '"'):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return None if value is None or isinstance(value, (bool, int, float)) else raw
    return raw


def _find(value: Any, keys: tuple[str, ...], wrappers: tuple[str, ...], roles: frozenset[str], depth: int,
          answer: bool = False, free: bool = True) -> str | None:
    """Text under ``keys``/``wrappers``; ``free`` allows any text, else only free text (containing whitespace)."""
    if depth > 8 or value is None:
        return None
    if isinstance(value, str):
        text = as_text(value)
        return text if text and (free or _is_free_text(text)) else None
    messages = messages_in(value) if isinstance(value, list) or is_mapping(value) else None
    if messages is not None:
        return text_of(messages, roles, last=True)
    if is_mapping(value):
        return _find_in_dict(value, keys, wrappers, roles, depth, answer)
    if isinstance(value, list):
        if answer and len(value) != 1:
            return None
        found = [t for item in value if (t := _find(item, keys, wrappers, roles, depth + 1, answer, free=False))]
        return found[0] if found else None
    return None


def _find_in_dict(data: Mapping[str, Any], keys: tuple[str, ...], wrappers: tuple[str, ...], roles: frozenset[str],
                  depth: int, answer: bool) -> str | None:
    if answer and isinstance(choices := data.get("choices"), list) and choices:  # an OpenAI completion object
        first = choices[0]
        if is_mapping(first) and (msg := first.get("message")) is not None:
            return _find(msg, keys, wrappers, roles, depth + 1, answer)
    if isinstance(data.get("messages"), list):
        return _find(data["messages"], keys, wrappers, roles, depth + 1, answer)
    for key in keys:
        if key in data and (text := _find(data[key], keys, wrappers, roles, depth + 1, answer)):
            return text
    for key in wrappers:  # an output wrapper holds the answer itself; input wrappers also hold ids and names
        if key in data and (text := _find(data[key], keys, wrappers, roles, depth + 1, answer, free=answer)):
            return text
    rest = [v for k, v in data.items() if k not in _META_KEYS and k not in wrappers and isinstance(v, str)]
    if len(rest) == 1 and (text := as_text(rest[0])) and _is_free_text(text):
        return text
    inner = [v for k, v in data.items() if k not in _META_KEYS and is_mapping(v)]
    if len(inner) == 1 and len(data) == 1:  # one component's inputs/outputs (Haystack: {"prompt_builder": {...}})
        return _find_in_dict(inner[0], keys, wrappers, roles, depth + 1, answer)
    return None


def _is_free_text(text: str) -> bool:
    """Prose rather than an identifier (a class name the SDK wrote for ``self``, an enum value, an id)."""
    stripped = text.strip()
    return any(c.isspace() for c in stripped) or not _IDENTIFIER.match(stripped)


def tool_io(raw_input: Any, raw_output: Any) -> tuple[Any, Any, str | None]:
    """(arguments, result, call id) of a tool span from its entity input/output (each None when absent)."""
    call_id: str | None = None
    args: Any = None
    data = decode(raw_input) if raw_input is not None else None
    if is_mapping(data) and ("input_str" in data or "inputs" in data):  # LangChain tool callback
        inputs = data.get("inputs")
        args = inputs if is_mapping(inputs) and inputs else parse_json_container(data.get("input_str"))
        extra = data.get("kwargs")
        call_id = as_str(extra.get("tool_call_id")) if is_mapping(extra) else None
    elif is_mapping(data) and set(data) <= {"args", "kwargs"} and data:  # Traceloop SDK decorator
        raw_args = data.get("args")
        positional = list(raw_args) if isinstance(raw_args, list) else []
        raw_named = data.get("kwargs")
        named = {str(k): v for k, v in raw_named.items()} if is_mapping(raw_named) else {}
        if not positional:
            args = named or None
        elif not named:
            args = positional[0] if len(positional) == 1 else positional
        else:
            args = {"args": positional, "kwargs": named}
    else:
        args = data
    result: Any = None
    if raw_output is not None:
        out = decode(raw_output)
        if is_mapping(out) and "output" in out and set(out) <= {"output", "kwargs"}:
            out = out["output"]
        if is_mapping(out) and "content" in out and (
                "tool_call_id" in out or (isinstance(cls := out.get(LC_CLASS), str) and cls in _LC_ROLES)):
            call_id = call_id or as_str(out.get("tool_call_id"))
            out = out.get("content")
        result = tool_result(out)
    return args, result, call_id
