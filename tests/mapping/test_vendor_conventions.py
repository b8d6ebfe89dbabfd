"""Vendor and framework emitters through the default router: pydantic-ai (instrumentation versions 1, 2 and 3+),
logfire's LLM integrations (OpenAI, Anthropic, OpenAI Agents SDK, Claude Agent SDK), Langfuse's own attributes,
the Anthropic SDK's built-in spans, non-standard operation names. Each span is built with the attribute shapes its
emitter writes (source cited per builder; the list of sources is in docs/conventions-vendors.md), with values as
JSON strings and as structured (kvlist/array) AnyValues.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evald.case import EvalCase
from evald.interfaces import MappingResult
from evald.mapping import vendor_payloads as vendor
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.router import MapperRouter, default_mappers
from evald.model import STATUS_ERROR, AssembledTrace, SpanRecord
from evald.testing import span

TRACE = "0af7651916cd43dd8448eb211c80319c"
ROUTER = MapperRouter(default_mappers())
ROOT, A, B, C, D = (f"00000000000000e{i}" for i in range(5))


def run(*spans: SpanRecord) -> MappingResult:
    return ROUTER.map(AssembledTrace(TRACE, spans))


def trace_case(result: MappingResult) -> EvalCase:
    (case,) = [c for c in result.cases if c.scope == "trace"]
    assert case.metadata["convention"] == "genai_semconv"
    return case


def calls(result: MappingResult) -> list[EvalCase]:
    return [c for c in result.cases if c.scope == "llm_call"]


def encoded(value: Any, as_json: bool) -> Any:
    """The same attribute value as a JSON string or as a structured AnyValue (kvlist/array)."""
    return json.dumps(value) if as_json else value


def tools(case: EvalCase) -> list[tuple[str, Any, Any, str | None]]:
    return [(t.name, t.arguments, t.result, t.id) for t in case.tool_calls]


# -- pydantic-ai -------------------------------------------------------------------------------------------------
# version 1 (pydantic_ai_slim/pydantic_ai/models/instrumented.py, event_mode="attributes"): chat spans carry
# `events`, a JSON array of InstrumentedModel.event_to_dict() items ({**body, **attributes} with "event.name");
# the agent run span (agent/__init__.py _run_span_end_attributes) carries `all_messages_events`, `final_result`
# and the run's usage; tool spans ("running tool", _tool_manager.py) carry gen_ai.tool.name / gen_ai.tool.call.id
# / tool_arguments / tool_response and no gen_ai.operation.name.
SYSTEM_EVENT = {"content": "Be brief.", "role": "system", "gen_ai.system": "openai",
                "event.name": "gen_ai.system.message"}
USER_EVENT = {"content": "Weather in Paris?", "role": "user", "gen_ai.message.index": 0, "gen_ai.system": "openai",
              "event.name": "gen_ai.user.message"}
CALL_MESSAGE = {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {
    "name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
TOOL_EVENT = {"content": "18C", "role": "tool", "id": "call_1", "name": "get_weather", "gen_ai.message.index": 2,
              "event.name": "gen_ai.tool.message"}


def pydantic_ai_v1(as_json: bool, named: bool = True) -> tuple[SpanRecord, ...]:
    def ev(item: dict[str, Any]) -> dict[str, Any]:
        return item if named else {k: v for k, v in item.items() if k != "event.name"}

    first = [ev(SYSTEM_EVENT), ev(USER_EVENT), ev({"index": 0, "message": CALL_MESSAGE, "event.name": "gen_ai.choice"})]
    history = [ev(SYSTEM_EVENT), ev(USER_EVENT), ev({**CALL_MESSAGE, "event.name": "gen_ai.assistant.message"}),
               ev(TOOL_EVENT)]
    second = [*history, ev({"index": 0, "message": {"role": "assistant", "content": "It is 18C."},
                            "event.name": "gen_ai.choice"})]
    everything = [*history, ev({"role": "assistant", "content": "It is 18C.",
                                "event.name": "gen_ai.assistant.message"})]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o", "model_request_parameters": "{}"}
    return (
        span(span_id=ROOT, name="agent run", duration_ms=100, attributes={
            "model_name": "gpt-4o", "agent_name": "weather", "logfire.msg": "weather run",
            "all_messages_events": encoded(everything, as_json), "final_result": "It is 18C.",
            "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 9}),
        span(span_id=A, parent=ROOT, name="chat gpt-4o", start_ms=1, attributes={
            **chat, "events": encoded(first, as_json), "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 5}),
        span(span_id=B, parent=ROOT, name="running tool", start_ms=20, attributes={
            "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1",
            "tool_arguments": encoded({"city": "Paris"}, True), "tool_response": "18C",
            "logfire.msg": "running tool: get_weather"}),
        span(span_id=C, parent=ROOT, name="chat gpt-4o", start_ms=40, attributes={
            **chat, "events": encoded(second, as_json), "gen_ai.usage.input_tokens": 20,
            "gen_ai.usage.output_tokens": 4}),
    )


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "structured"])
@pytest.mark.parametrize("named", [True, False], ids=["event.name", "role-only"])
def test_pydantic_ai_v1_events(as_json: bool, named: bool) -> None:
    result = run(*pydantic_ai_v1(as_json, named))
    case = trace_case(result)
    assert (case.input, case.output, case.system_prompt) == ("Weather in Paris?", "It is 18C.", "Be brief.")
    assert tools(case) == [("get_weather", {"city": "Paris"}, "18C", "call_1")]
    # usage of the two chat spans; the agent span's run total (30/9 = the same tokens) is not added again
    assert (case.input_tokens, case.output_tokens, case.model) == (30, 9, "gpt-4o")
    assert case.metadata["agent_name"] == "weather"
    first, second = calls(result)
    assert (first.output, [t.name for t in first.tool_calls], second.output) == (None, ["get_weather"], "It is 18C.")


# version 2 (instrumented.py docstring: gen_ai.input.messages / gen_ai.output.messages on model request spans,
# `pydantic_ai.all_messages` on agent run spans); tool spans still "running tool" with tool_arguments /
# tool_response (_instrumentation.py InstrumentationNames.for_version(2)); the agent span may report its usage as
# gen_ai.aggregated_usage.* (use_aggregated_usage_attribute_names).
def parts_message(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


HISTORY = [parts_message("user", text("Weather in Paris?")),
           parts_message("assistant", {"type": "tool_call", "id": "call_1", "name": "get_weather",
                                       "arguments": {"city": "Paris"}}),
           parts_message("tool", {"type": "tool_call_response", "id": "call_1", "name": "get_weather",
                                  "result": "18C"})]


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "structured"])
def test_pydantic_ai_v2_all_messages_and_structured_final_result(as_json: bool) -> None:
    final = {"city": "Paris", "temperature": 18}
    result = run(
        span(span_id=ROOT, name="agent run", duration_ms=100, attributes={
            "agent_name": "weather", "gen_ai.agent.name": "weather",
            "pydantic_ai.all_messages": encoded([*HISTORY, parts_message("assistant", text("ok"))], as_json),
            "final_result": json.dumps(final), "gen_ai.aggregated_usage.input_tokens": 30,
            "gen_ai.aggregated_usage.output_tokens": 9}),
        span(span_id=A, parent=ROOT, name="chat gpt-4o", start_ms=1, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": encoded(HISTORY[:1], as_json),
            "gen_ai.output.messages": encoded(HISTORY[1:2], as_json)}),
        span(span_id=B, parent=ROOT, name="running tool", start_ms=20, attributes={
            "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1", "tool_arguments": '{"city":"Paris"}',
            "tool_response": "18C"}),
        span(span_id=C, parent=ROOT, name="chat gpt-4o", start_ms=40, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": encoded(HISTORY, as_json),
            "gen_ai.output.messages": encoded([parts_message("assistant", text("ok"))], as_json)}),
    )
    case = trace_case(result)
    assert (case.input, json.loads(case.output)) == ("Weather in Paris?", final)
    assert tools(case) == [("get_weather", {"city": "Paris"}, "18C", "call_1")]
    # the chat spans carry no usage: the agent span's run total is the trace's
    assert (case.input_tokens, case.output_tokens, case.token_count) == (30, 9, 39)


def test_pydantic_ai_v3_execute_tool_without_operation_name() -> None:
    # version 3+ before the capability rewrite: "execute_tool {name}" spans with gen_ai.tool.call.arguments /
    # .result and no gen_ai.operation.name (_tool_manager.py _call_function_tool)
    result = run(
        span(span_id=ROOT, name="invoke_agent weather", duration_ms=100, attributes={
            "gen_ai.agent.name": "weather", "gen_ai.operation.name": "invoke_agent", "final_result": "It is 18C."}),
        span(span_id=A, parent=ROOT, name="chat gpt-4o", start_ms=1, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": json.dumps(HISTORY[:1]), "gen_ai.output.messages": json.dumps(HISTORY[1:2])}),
        span(span_id=B, parent=ROOT, name="execute_tool get_weather", start_ms=20, attributes={
            "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": '{"city": "Paris"}', "gen_ai.tool.call.result": "18C"}),
    )
    case = trace_case(result)
    assert (case.input, case.output) == ("Weather in Paris?", "It is 18C.")
    assert tools(case) == [("get_weather", {"city": "Paris"}, "18C", "call_1")]


# -- logfire LLM integrations -------------------------------------------------------------------------------------
# logfire/_internal/integrations/llm_providers/{openai,anthropic,llm_provider}.py and tests/otel_integrations/
# test_openai.py snapshots (logfire 0.x-3.x): `request_data` / `response_data` (JSON strings on the wire,
# logfire.json_schema says "object"), gen_ai.system / gen_ai.request.model / usage, no gen_ai.operation.name.
OPENAI_REQUEST = {"messages": [{"role": "system", "content": "You are a helpful assistant."},
                               {"role": "user", "content": "What is four plus five?"}], "model": "gpt-4"}


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "structured"])
def test_logfire_openai_chat_completion(as_json: bool) -> None:
    result = run(span(span_id=A, name="Chat Completion with {request_data[model]!r}", attributes={
        "request_data": encoded(OPENAI_REQUEST, as_json), "async": False, "logfire.span_type": "span",
        "logfire.msg_template": "Chat Completion with {request_data[model]!r}", "logfire.tags": ["LLM"],
        "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4", "gen_ai.response.model": "gpt-4",
        "response_data": encoded({"message": {"content": "Nine", "role": "assistant", "tool_calls": None},
                                  "usage": {"completion_tokens": 1, "prompt_tokens": 2}}, as_json)}))
    case = trace_case(result)
    assert (case.input, case.output, case.system_prompt) == ("What is four plus five?", "Nine",
                                                             "You are a helpful assistant.")
    assert (case.input_tokens, case.output_tokens, case.model, case.provider) == (2, 1, "gpt-4", "openai")


def test_logfire_stream_request_and_recorded_response_are_one_call() -> None:
    # the request span ends when the stream is returned; record_streaming() later logs "streaming response from
    # {request_data[model]!r} took {duration:.2f}s" with the same span data plus response_data (llm_provider.py)
    request = json.dumps({**OPENAI_REQUEST, "stream": True})
    common = {"request_data": request, "async": False, "logfire.tags": ["LLM"]}
    result = run(
        span(span_id=ROOT, name="app", duration_ms=100),
        span(span_id=A, parent=ROOT, name="Chat Completion with {request_data[model]!r}", start_ms=1,
             attributes={**common, "logfire.span_type": "span"}),
        span(span_id=B, parent=ROOT, name="streaming response from {request_data[model]!r} took {duration:.2f}s",
             start_ms=30, duration_ms=0, attributes={
                 **common, "logfire.span_type": "log", "duration": 1.0,
                 "response_data": json.dumps({"combined_chunk_content": "Nine", "chunk_count": 2})}))
    (call,) = calls(result)
    assert (call.span_id, call.output, call.request_model) == (B, "Nine", "gpt-4")
    assert not result.not_evaluable
    assert trace_case(result).output == "Nine"


def test_logfire_anthropic_message_with_tool_use() -> None:
    request = {"max_tokens": 1000, "system": "You are helpful.", "model": "claude-3-haiku-20240307",
               "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    response = {"message": {"id": "msg_1", "role": "assistant", "model": "claude-3-haiku-20240307", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        "usage": {"input_tokens": 12, "output_tokens": 7}}
    result = run(span(name="Message with {request_data[model]!r}", attributes={
        "request_data": json.dumps(request), "response_data": json.dumps(response), "gen_ai.system": "anthropic",
        "gen_ai.request.model": "claude-3-haiku-20240307", "logfire.tags": ["LLM"]}))
    case = trace_case(result)
    assert (case.input, case.output, case.system_prompt) == ("Weather in Paris?", "Let me check.", "You are helpful.")
    assert tools(case) == [("get_weather", {"city": "Paris"}, None, "toolu_1")]
    assert (case.input_tokens, case.output_tokens, case.provider) == (12, 7, "anthropic")


def test_logfire_embeddings_only_is_not_an_inference() -> None:
    result = run(span(name="Embedding Creation with {request_data[model]!r}", attributes={
        "request_data": json.dumps({"input": ["a", "b"], "model": "text-embedding-3-small"}),
        "gen_ai.system": "openai", "logfire.tags": ["LLM"], "response_data": json.dumps({"usage": {}})}))
    assert not result.cases and [n.reason for n in result.not_evaluable] == ["no_inference_span"]


# logfire/_internal/integrations/openai_agents.py: a "Responses API" span gets gen_ai.operation.name "chat",
# gen_ai.system, request/response model, usage and `events` built by inputs_to_events() + responses_output_events()
# (the outputs are plain gen_ai.assistant.message items, no gen_ai.choice); a "Generation" span (Chat Completions
# model) gets request_data = {"messages": input + output, "model"} and usage, but no operation name.
def test_logfire_openai_agents_response_span_events() -> None:
    events = [
        {"event.name": "gen_ai.system.message", "content": "Be brief.", "role": "system"},
        {"event.name": "gen_ai.user.message", "content": "Weather in Paris?", "role": "user"},
        {"event.name": "gen_ai.assistant.message", "role": "assistant", "tool_calls": [{
            "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"event.name": "gen_ai.tool.message", "role": "tool", "id": "call_1", "content": "18C", "name": "get_weather"},
        {"event.name": "gen_ai.assistant.message", "content": "It is 18C in Paris.", "role": "assistant"}]
    result = run(span(name="Responses API with {gen_ai.request.model!r}", attributes={
        "gen_ai.system": "openai", "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06", "response_id": "resp_1", "events": json.dumps(events),
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 8}))
    case = trace_case(result)
    assert (case.input, case.output, case.model) == ("Weather in Paris?", "It is 18C in Paris.", "gpt-4o-2024-08-06")
    assert tools(case) == [("get_weather", {"city": "Paris"}, "18C", "call_1")]


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "structured"])
def test_logfire_openai_agents_generation_span(as_json: bool) -> None:
    messages = [{"role": "user", "content": "Hi there?"}, {"role": "assistant", "content": "Hello!"}]
    result = run(span(name="Chat completion with {gen_ai.request.model!r}", attributes={
        "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o",
        "request_data": encoded({"messages": messages, "model": "gpt-4o"}, as_json),
        "gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 2}))
    case = trace_case(result)
    assert (case.input, case.output, case.input_tokens) == ("Hi there?", "Hello!", 5)


# logfire/_internal/integrations/claude_agent_sdk.py: an invoke_agent root with the prompt and the run's usage
# (ResultMessage), chat spans whose per-message usage is only gen_ai.usage.partial.*, execute_tool spans.
def test_claude_agent_sdk_run_usage_from_agent_span() -> None:
    prompt = json.dumps([parts_message("user", text("List files"))])
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.system": "anthropic",
            "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.response.model": "claude-sonnet-4-5"}
    result = run(
        span(span_id=ROOT, name="invoke_agent", duration_ms=100, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic",
            "gen_ai.input.messages": prompt,
            "gen_ai.usage.input_tokens": 300, "gen_ai.usage.output_tokens": 40, "gen_ai.conversation.id": "s-1"}),
        span(span_id=A, parent=ROOT, name="chat claude-sonnet-4-5", start_ms=1, attributes={
            **chat, "gen_ai.input.messages": prompt, "gen_ai.usage.partial.input_tokens": 3,
            "gen_ai.output.messages": json.dumps([parts_message("assistant", {
                "type": "tool_call", "id": "toolu_1", "name": "Bash", "arguments": {"command": "ls"}})])}),
        span(span_id=B, parent=ROOT, name="execute_tool Bash", start_ms=10, attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash", "gen_ai.tool.call.id": "toolu_1",
            "gen_ai.tool.call.arguments": {"command": "ls"}, "gen_ai.tool.call.result": "a.txt"}),
        span(span_id=C, parent=ROOT, name="chat claude-sonnet-4-5", start_ms=20, attributes={
            **chat, "gen_ai.input.messages": json.dumps([
                parts_message("user", text("List files")),
                parts_message("tool", {"type": "tool_call_response", "id": "toolu_1", "response": "a.txt"})]),
            "gen_ai.output.messages": json.dumps([parts_message("assistant", text("One file: a.txt"))])}))
    case = trace_case(result)
    assert (case.input, case.output, case.input_tokens, case.output_tokens) == ("List files", "One file: a.txt",
                                                                                300, 40)
    assert tools(case) == [("Bash", {"command": "ls"}, "a.txt", "toolu_1")]
    assert [c.input_tokens for c in calls(result)] == [None, None]


# -- Langfuse (langfuse-python langfuse/_client/attributes.py LangfuseOtelSpanAttributes; constants.py types) --------
@pytest.mark.parametrize("as_json", [True, False], ids=["json", "structured"])
def test_langfuse_observations(as_json: bool) -> None:
    result = run(
        span(span_id=ROOT, name="answer_question", duration_ms=100, attributes={
            "langfuse.observation.type": "span", "session.id": "s-1", "langfuse.trace.name": "qa",
            "langfuse.observation.input": encoded({"args": ["What is the capital of France?"], "kwargs": {}}, as_json),
            "langfuse.observation.output": json.dumps("Paris is the capital.")}),
        span(span_id=A, parent=ROOT, name="retrieve", start_ms=1, attributes={
            "langfuse.observation.type": "retriever", "langfuse.observation.input": "capital of France",
            "langfuse.observation.output": encoded([
                {"id": "kb-1", "page_content": "Paris is the capital of France.", "score": 0.9},
                {"id": "kb-2", "page_content": "Berlin is in Germany.", "score": 0.2}], as_json)}),
        span(span_id=B, parent=ROOT, name="OpenAI-generation", start_ms=10, attributes={
            "langfuse.observation.type": "generation", "langfuse.observation.model.name": "gpt-4o-mini",
            "langfuse.observation.input": encoded([
                {"role": "system", "content": "Use the context."},
                {"role": "user", "content": "Context: Paris is the capital of France.\nQuestion: capital?"}], as_json),
            "langfuse.observation.output": encoded({"role": "assistant", "content": "Paris is the capital."}, as_json),
            "langfuse.observation.usage_details": encoded({"prompt_tokens": 40, "completion_tokens": 6,
                                                           "total_tokens": 46}, as_json)}),
        span(span_id=C, parent=ROOT, name="get_weather", start_ms=30, attributes={
            "langfuse.observation.type": "tool",
            "langfuse.observation.input": json.dumps({"args": [], "kwargs": {"city": "Paris"}}),
            "langfuse.observation.output": json.dumps({"temp": 18})}),
        span(span_id=D, parent=ROOT, name="score", start_ms=40, attributes={"langfuse.observation.type": "event"}))
    case = trace_case(result)
    assert (case.input, case.output, case.system_prompt) == ("What is the capital of France?",
                                                             "Paris is the capital.", "Use the context.")
    assert (case.input_tokens, case.output_tokens, case.model) == (40, 6, "gpt-4o-mini")
    assert [(d.id, d.content, d.score) for d in case.context] == [
        ("kb-1", "Paris is the capital of France.", 0.9), ("kb-2", "Berlin is in Germany.", 0.2)]
    assert tools(case) == [("get_weather", {"city": "Paris"}, {"temp": 18}, None)]
    assert (case.metadata["workflow_name"], case.metadata["conversation_id"]) == ("qa", "s-1")


def test_langfuse_generation_error_level_and_usage_names() -> None:
    result = run(span(name="generation", attributes={
        "langfuse.observation.type": "generation", "langfuse.observation.input": "Hi",
        "langfuse.observation.usage_details": '{"input": 3, "output": 0}',
        "langfuse.observation.level": "ERROR", "langfuse.observation.status_message": "HTTP 500"}))
    case = trace_case(result)
    assert (case.input, case.output, case.error, case.input_tokens, case.output_tokens) == ("Hi", None, True, 3, 0)


def test_langfuse_trace_io_on_an_otel_span() -> None:
    # update_trace(input=..., output=...) on a span of another instrumentation: langfuse.trace.input/output
    result = run(
        span(span_id=ROOT, name="handler", duration_ms=100, attributes={
            "langfuse.trace.input": json.dumps({"question": "Capital of France?"}),
            "langfuse.trace.output": json.dumps({"answer": "Paris."})}),
        span(span_id=A, parent=ROOT, name="chat", start_ms=1, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps([parts_message("user", text("Context ...\nCapital of France?"))]),
            "gen_ai.output.messages": json.dumps([parts_message("assistant", text("Paris."))])}))
    assert (trace_case(result).input, trace_case(result).output) == ("Capital of France?", "Paris.")


# -- the Anthropic SDK's built-in spans (platform.claude.com/docs/en/api/opentelemetry/spans, beta) ---------------
def test_anthropic_sdk_span_inside_a_framework_chat_span_counts_once() -> None:
    messages = json.dumps([parts_message("user", text("Hello"))])
    answer = json.dumps([parts_message("assistant", text("Hi!"))])
    result = run(
        span(span_id=A, name="chat claude-sonnet-4-5", duration_ms=50, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.input.messages": messages,
            "gen_ai.output.messages": answer, "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 2}),
        span(span_id=B, parent=A, name="anthropic.messages.create", start_ms=1, duration_ms=40, attributes={
            "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.response.id": "msg_1",
            "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 2, "anthropic.request.id": "req_1"}))
    (call,) = calls(result)
    # the inner (SDK) span is the call; its missing content comes from the framework span around it
    assert (call.span_id, call.input, call.output, call.model) == (B, "Hello", "Hi!", "claude-sonnet-4-5-20250929")
    case = trace_case(result)
    assert (case.input_tokens, case.output_tokens, case.metadata["llm_call_count"]) == (8, 2, 1)


def test_anthropic_sdk_span_inside_openllmetry_anthropic_span_counts_once() -> None:
    # opentelemetry-instrumentation-anthropic (OpenLLMetry) wraps Messages.create; the SDK's own span is inside it
    result = run(
        span(span_id=A, name="anthropic.chat", duration_ms=50, attributes={
            "llm.request.type": "chat", "gen_ai.system": "Anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hello", "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Hi!", "gen_ai.usage.prompt_tokens": 8, "gen_ai.usage.completion_tokens": 2,
            "llm.usage.total_tokens": 10}),
        span(span_id=B, parent=A, name="anthropic.messages.create", start_ms=1, duration_ms=40, attributes={
            "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
            "gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.response.id": "msg_1",
            "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 2}))
    (whole,) = [c for c in result.cases if c.scope == "trace"]
    assert whole.metadata["convention"] == "openllmetry" and len(calls(result)) == 1
    assert (whole.input, whole.output, whole.input_tokens, whole.output_tokens) == ("Hello", "Hi!", 8, 2)


# -- non-standard operation names ---------------------------------------------------------------------------------
@pytest.mark.parametrize("operation", ["chat_completions", "Chat.Completions", "responses", "completion"])
def test_operation_name_aliases(operation: str) -> None:
    result = run(span(name="c", attributes={
        "gen_ai.operation.name": operation, "gen_ai.input.messages": json.dumps([parts_message("user", text("Hi"))]),
        "gen_ai.output.messages": json.dumps([parts_message("assistant", text("Hello"))])}))
    assert (trace_case(result).input, trace_case(result).output) == ("Hi", "Hello")


# -- routing and the fast path ------------------------------------------------------------------------------------
def test_spans_without_vendor_keys_are_not_copied() -> None:
    plain = span(attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[]", "http.method": "GET"})
    assert vendor.normalize(plain) is plain
    tool = span(attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"})
    assert vendor.normalize(tool) is tool


def test_generic_keys_alone_do_not_claim_a_trace() -> None:
    mapper = GenAISemconvMapper()
    generic = AssembledTrace(TRACE, (span(attributes={"events": "[]", "request_data": "{}", "final_result": "x"}),))
    assert not mapper.matches(generic) and run(*generic.spans) == MappingResult()
    for attrs in ({"langfuse.observation.type": "span"}, {"pydantic_ai.all_messages": "[]"},
                  {"request_data": "{}", "gen_ai.system": "openai"}, {"request_data": "{}", "logfire.tags": ["LLM"]}):
        assert mapper.matches(AssembledTrace(TRACE, (span(attributes=attrs),)))


def test_openinference_openai_agents_stays_with_openinference() -> None:
    # openinference-instrumentation-openai-agents (_processor.py _get_span_kind): AGENT / LLM / TOOL spans
    result = run(span(attributes={"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o",
                                  "llm.input_messages.0.message.role": "user",
                                  "llm.input_messages.0.message.content": "Hi",
                                  "llm.output_messages.0.message.role": "assistant",
                                  "llm.output_messages.0.message.content": "Hello",
                                  "session.id": "s", "final_result": "x"}))
    assert {c.metadata["convention"] for c in result.cases} == {"openinference"}


def test_garbage_vendor_values_do_not_raise() -> None:
    result = run(
        span(span_id=A, name="x", attributes={"request_data": "{not json", "response_data": 5, "logfire.tags": ["LLM"],
                                              "gen_ai.system": "openai", "events": "[1, 2", "final_result": None}),
        span(span_id=B, attributes={"langfuse.observation.type": 7, "langfuse.observation.input": {"a": [1]}}),
        span(span_id=C, attributes={"gen_ai.tool.name": ["x"], "tool_arguments": b"\xff"},
             status_code=STATUS_ERROR))
    assert all(n.reason != "mapper_error" for n in result.not_evaluable)
    assert not [w for w in result.warnings if "unreadable" in w]
