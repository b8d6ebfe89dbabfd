"""Tool calls an emitter wrote as the Python repr of an SDK object instead of a typed message part.

opentelemetry-instrumentation-openai-agents-v2 0.1.0 puts a Responses API function call into
``gen_ai.output.messages`` as a *text* part holding ``ResponseFunctionToolCall(arguments='{"city": "Paris"}',
call_id='call_1', name='get_weather', type='function_call', ...)``. Read as text, the model's tool request would
become its "answer". :func:`repr_tool_call` turns such a text back into the call it describes (the OpenAI SDK's
``ResponseFunctionToolCall`` / ``ChatCompletionMessageToolCall`` / ``Function`` reprs; keyword fields with string
literal values only). Pure; anything else gives ``None``.
"""

from __future__ import annotations

import ast
import re
from typing import Final

from evald.case import ToolCall, new_tool_call
from evald.mapping.values import parse_json_container

_CALL_REPRS: Final = ("ResponseFunctionToolCall(", "ChatCompletionMessageToolCall(",
                      "ChatCompletionMessageFunctionToolCall(")
_FIELD: Final = re.compile(r"\b(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_MAX_REPR: Final = 1 << 20


def is_call_repr(text: str) -> bool:
    """Cheap pre-check: the text starts like one of the SDK reprs (one ``startswith`` per repr)."""
    return text.startswith(_CALL_REPRS) and text.endswith(")")


def repr_tool_call(text: str) -> ToolCall | None:
    """The tool call a ``ResponseFunctionToolCall(...)``-style repr describes, or ``None``."""
    if not is_call_repr(text) or len(text) > _MAX_REPR:
        return None
    fields: dict[str, str] = {}
    for match in _FIELD.finditer(text):
        try:
            value = ast.literal_eval(match.group(2))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, str):
            fields.setdefault(match.group(1), value)  # the outer object's fields come first
    name = fields.get("name")
    if not name:
        return None
    call_id = fields.get("call_id") or fields.get("id")
    return new_tool_call(name=name, arguments=parse_json_container(fields.get("arguments")), id=call_id)
