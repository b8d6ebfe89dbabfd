"""MCP spans (the OpenTelemetry MCP semantic conventions) as tool calls of the GenAI case.

An MCP ``tools/call`` request is traced as a CLIENT span (``mcp.method.name = tools/call``, named ``{method}
{target}``; the official Python SDK names it ``MCP send tools/call <tool>``) and, when the server is instrumented
too, a SERVER span below it (trace context travels in ``params._meta``) carrying ``gen_ai.operation.name =
execute_tool`` and ``gen_ai.tool.name``. The server span is already an ``execute_tool`` span for the GenAI mapper.
:func:`mcp_tool_calls` gives the client spans that nothing else records: a client span with an ``execute_tool``
child (its server span) or an ``execute_tool`` ancestor (a framework's tool span wrapping the MCP request) is left
out, so each call counts once. The tool name is ``gen_ai.tool.name``, else the span name's target; arguments and
result come from ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result`` when the instrumentation records them
(opt-in; the official SDK does not), the id from ``gen_ai.tool.call.id`` (absent: the call completes the first
open call of the same name, e.g. the one the model requested); ``error`` from an error status or ``error.type``.
``mcp.session.id`` and ``jsonrpc.request.id`` are not tool call ids and are not used as such.

Failure semantics: pure; a span that is not an MCP tool call, or has no tool name, is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from evald import semconv as sc
from evald.case import ToolCall, new_tool_call
from evald.mapping.case_parts import lineage, tool_result
from evald.mapping.values import as_str, parse_json_container, plain
from evald.model import STATUS_ERROR, SpanRecord

MCP_METHOD: Final = "mcp.method.name"
MCP_SESSION_ID: Final = "mcp.session.id"
TOOLS_CALL: Final = "tools/call"
_NAME_PREFIXES: Final = ("MCP send tools/call ", "tools/call ")


def mcp_tool_calls(spans: Sequence[SpanRecord], ops: Mapping[str, str]) -> dict[str, ToolCall]:
    """span id -> the tool call of each MCP ``tools/call`` span that no ``execute_tool`` span records."""
    # read as dicts (values.plain): compiled, each get is a direct C call instead of a method lookup and generic call;
    # the MCP method first, which most spans lack
    op_of = plain(ops)
    candidates = [s for s in spans if plain(s.attributes).get(MCP_METHOD) == TOOLS_CALL
                  and op_of.get(s.span_id) != sc.OP_EXECUTE_TOOL]
    if not candidates:
        return {}
    by_id = {s.span_id: s for s in spans}
    executed_parents = {s.parent_span_id for s in spans if op_of.get(s.span_id) == sc.OP_EXECUTE_TOOL}
    out: dict[str, ToolCall] = {}
    for span in candidates:
        if span.span_id in executed_parents:
            continue  # its instrumented server span is the execute_tool span that records the call
        if any(op_of.get(a.span_id) == sc.OP_EXECUTE_TOOL for a in lineage(span, by_id)[1:]):
            continue  # a framework's execute_tool span wraps the request and records the call
        name = as_str(span.attributes.get(sc.TOOL_NAME)) or _target(span.name)
        if not name:
            continue
        attrs = span.attributes
        result = attrs.get(sc.TOOL_CALL_RESULT)
        out[span.span_id] = new_tool_call(
            name=name, arguments=parse_json_container(attrs.get(sc.TOOL_CALL_ARGUMENTS)),
            result=tool_result(result) if result is not None else None, id=as_str(attrs.get(sc.TOOL_CALL_ID)),
            error=span.status_code == STATUS_ERROR or as_str(attrs.get(sc.ERROR_TYPE)) is not None)
    return out


def _target(span_name: str) -> str | None:
    for prefix in _NAME_PREFIXES:
        if span_name.startswith(prefix):
            target = span_name[len(prefix):].strip()
            return target or None
    return None
