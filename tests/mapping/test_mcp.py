"""MCP spans into the case's tool calls (evald/mapping/mcp.py), on traces captured from the official ``mcp`` Python
SDK's instrumentation (tests/testdata/mcp/capture.py) and on spans with every attribute of the conventions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evald.case import EvalCase
from evald.mapping.router import MapperRouter, default_mappers
from evald.metrics.mcp.mcp_trace_completeness import MCPTraceCompletenessMetric
from evald.metrics.mcp.tool_selection_accuracy import ToolSelectionAccuracyMetric
from evald.model import STATUS_ERROR, AssembledTrace, SpanRecord
from evald.receivers.files import read_signal_file
from evald.testing import span

MCP = Path(__file__).resolve().parent.parent / "testdata" / "mcp"
CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages")


def spans_of(name: str, *, server: bool = True, content: bool = True) -> list[SpanRecord]:
    spans = list(read_signal_file(MCP / name).spans)
    if not server:  # the MCP server not instrumented (a remote server): only the client's spans
        spans = [s for s in spans if s.service_name != "weather-mcp-server"]
    if not content:  # the inference instrumentation without content capture
        spans = [replace(s, attributes={k: v for k, v in s.attributes.items() if k not in CONTENT}) for s in spans]
    return spans


def trace_case(spans: list[SpanRecord]) -> EvalCase:
    result = MapperRouter(default_mappers()).map(AssembledTrace(spans[0].trace_id, tuple(spans)))
    (case,) = [c for c in result.cases if c.scope == "trace"]
    return case


def calls(case: EvalCase) -> list[tuple[str, object, bool]]:
    return [(c.name, c.arguments, c.error) for c in case.tool_calls]


@pytest.mark.parametrize("name", ["inproc.pb", "stdio.pb"])
def test_client_and_server_spans_count_each_call_once(name: str) -> None:
    case = trace_case(spans_of(name))
    assert calls(case) == [("get_weather", {"city": "Paris"}, False), ("get_forecast", {"city": "Paris", "days": 3},
                                                                         True)]  # the server span's tool_error
    without_content = trace_case(spans_of(name, content=False))
    assert calls(without_content) == [("get_weather", None, False), ("get_forecast", None, True)]


def test_client_spans_alone_give_the_calls_when_the_model_recorded_none() -> None:
    case = trace_case(spans_of("stdio.pb", server=False, content=False))
    assert [c.name for c in case.tool_calls] == ["get_weather", "get_forecast"]
    with_content = trace_case(spans_of("stdio.pb", server=False))  # completing the model's requested calls
    assert [(c.name, c.id) for c in with_content.tool_calls] == [("get_weather", "call_1"), ("get_forecast", "call_2")]


def test_the_mcp_metrics_score_the_captured_trace() -> None:
    case = replace(trace_case(spans_of("stdio.pb", server=False, content=False)),
                   expected_tools=("get_weather", "get_forecast", "get_alerts"))
    selection = ToolSelectionAccuracyMetric().measure(case)
    assert selection is not None and selection.value == pytest.approx(2 / 3)
    completeness = MCPTraceCompletenessMetric().measure(case)
    assert completeness is not None and completeness.value == pytest.approx(2 / 3)


TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _agent(*children: SpanRecord) -> list[SpanRecord]:
    root = span(TRACE, "a" * 16, name="invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"})
    chat = span(TRACE, "b" * 16, parent="a" * 16, name="chat m", start_ms=1, attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.provider.name": "openai"})
    return [root, chat, *children]


def test_convention_attributes_and_a_wrapping_tool_span() -> None:
    client = span(TRACE, "c" * 16, parent="a" * 16, name="tools/call search", start_ms=2, status_code=STATUS_ERROR,
                  attributes={"mcp.method.name": "tools/call", "gen_ai.tool.name": "search",
                              "gen_ai.tool.call.arguments": '{"q": "x"}', "gen_ai.tool.call.result": "none",
                              "mcp.session.id": "s-1", "jsonrpc.request.id": "7"})
    assert calls(trace_case(_agent(client))) == [("search", {"q": "x"}, True)]
    wrapper = span(TRACE, "d" * 16, parent="a" * 16, name="execute_tool search", start_ms=2, attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"})
    # the SDK's client span (MCP attributes only) inside a framework's tool span: the tool span records the call
    wrapped = replace(client, parent_span_id="d" * 16, name="MCP send tools/call search",
                      attributes={"mcp.method.name": "tools/call", "jsonrpc.request.id": "7"})
    assert [c.name for c in trace_case(_agent(wrapper, wrapped)).tool_calls] == ["search"]
    other = span(TRACE, "e" * 16, parent="a" * 16, name="tools/list", start_ms=3,
                 attributes={"mcp.method.name": "tools/list"})
    unnamed = replace(client, span_id="f" * 16, name="tools/call", attributes={"mcp.method.name": "tools/call"})
    assert trace_case(_agent(other, unnamed)).tool_calls == ()
