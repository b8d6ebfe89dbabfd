"""Tool calls of an OpenLLMetry trace, merged by call id across LLM spans and tool spans.

Sources, fed in span start order: the tool calls an LLM output requested (``gen_ai.completion.{i}.tool_calls.{j}.*``
or ``tool_call`` parts); in an LLM input, assistant tool calls of the current turn (after the last user message;
earlier turns only complete known ids) and tool results (``tool`` messages with ``tool_call_id``, or
``tool_call_response`` parts); tool spans (``traceloop.span.kind = tool`` or ``execute_tool``): name from
``gen_ai.tool.name`` / ``traceloop.entity.name`` / ``tool.name``, arguments from ``gen_ai.tool.call.arguments`` /
``tool.arguments`` / the entity input, result from ``gen_ai.tool.call.result`` / the entity output, id from
``gen_ai.tool.call.id`` or a LangChain ``tool_call_id`` (a ``gen_ai.tool.call.*`` value that copies the entity data is
unwrapped like it). An id-less tool span completes the first open call of the
same name. Earlier values win; ``error`` is sticky. Nothing raises on bad data.
"""

from __future__ import annotations

from typing import Any

from evald import semconv as sc
from evald.case import ToolCall
from evald.mapping.case_parts import tool_result
from evald.mapping.openllmetry_attrs import ENTITY_INPUT, ENTITY_NAME, ENTITY_OUTPUT, error_of
from evald.mapping.openllmetry_entities import tool_io
from evald.mapping.values import as_str, parse_json_container
from evald.model import SpanRecord


def tool_from_span(span: SpanRecord) -> ToolCall:
    """A tool span as a ToolCall (GenAI attributes first, then LlamaIndex ``tool.*``, then Traceloop entity data)."""
    attrs = span.attributes
    raw_in, raw_out = attrs.get(ENTITY_INPUT), attrs.get(ENTITY_OUTPUT)
    args, result, call_id = tool_io(raw_in, raw_out) if raw_in is not None or raw_out is not None else (
        None, None, None)
    # OpenLLMetry >= 0.62 also copies the entity input/output (LangChain callback wrappers) into
    # gen_ai.tool.call.*: a copy is read as the entity data above, anything else as the plain value it is
    explicit_args = _first(attrs, sc.TOOL_CALL_ARGUMENTS, "tool.arguments")
    if explicit_args is not None and explicit_args != raw_in:
        args = parse_json_container(explicit_args)
    if (explicit_result := attrs.get(sc.TOOL_CALL_RESULT)) is not None and explicit_result != raw_out:
        result = tool_result(explicit_result)
    name = (as_str(attrs.get(sc.TOOL_NAME)) or as_str(attrs.get(ENTITY_NAME)) or as_str(attrs.get("tool.name"))
            or span.name.removesuffix(".tool"))
    return ToolCall(name=name, arguments=args, result=result, id=as_str(attrs.get(sc.TOOL_CALL_ID)) or call_id,
                    error=error_of(span) is not None)


def _first(attrs: Any, *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)
