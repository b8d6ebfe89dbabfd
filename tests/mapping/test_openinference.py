"""OpenInferenceMapper: the OpenInference corpus against its ground truth, then unit tests for attribute shapes the
convention allows that the corpus lacks (array/kvlist/JSON forms, payload-only spans, nesting, routing, failures).

Corpus expected values come from manifest.json through ``MapperRouter([OpenInferenceMapper(), GenAISemconvMapper()])``;
nothing is special-cased per file. Text is compared after decoding escapes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from corpus_loader import FileReport, api_call_cases, load_traces, manifest_files, map_file

from evald.case import EvalCase, ToolCall
from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openinference import OpenInferenceMapper
from evald.mapping.router import MapperRouter
from evald.mapping.values import decode_escapes
from evald.model import STATUS_ERROR, STATUS_OK, STATUS_UNSET, AssembledTrace, SpanEvent, SpanRecord
from evald.testing import chat_span, span

ENTRIES = manifest_files("openinference-")
ROUTER = MapperRouter([OpenInferenceMapper(), GenAISemconvMapper()])


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['instrumentation']}/{entry['scenario']}"


def _text(value: Any) -> Any:
    return decode_escapes(value) if isinstance(value, str) else value


@pytest.fixture(scope="module", params=ENTRIES, ids=_id)
def report(request: pytest.FixtureRequest) -> FileReport:
    return map_file(request.param, ROUTER)


def test_corpus_is_present_and_routed_here() -> None:
    assert {e["instrumentation"] for e in ENTRIES} == {"openinference-openai", "openinference-langchain"}
    assert len(ENTRIES) == 15
    assert all(OpenInferenceMapper().matches(t) for e in ENTRIES for t in load_traces(e["file"]))


def test_other_conventions_are_not_matched() -> None:
    others = [e for e in manifest_files() if not e["instrumentation"].startswith("openinference-")]
    assert others
    assert not any(OpenInferenceMapper().matches(t) for e in others for t in load_traces(e["file"]))
    for entry in manifest_files("otel-openai-v2"):  # routing order keeps the GenAI corpus on its mapper
        for result in map_file(entry, ROUTER).results:
            assert {c.metadata["convention"] for c in result.cases} <= {"genai_semconv"}


def test_every_field_matches_ground_truth(report: FileReport) -> None:
    failed = {name: (c.expected, c.actual) for name, c in report.checks.items() if c.ok is False or c.partial}
    assert not failed, failed


def test_trace_case(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    if gt["llm_call_count"] == 0:  # embeddings only
        assert report.trace_case is None and not report.llm_calls
        assert {(n.reason, n.scope) for r in report.results for n in r.not_evaluable} == {
            ("no_inference_span", "trace")}
        return
    case = report.trace_case
    assert case is not None
    assert case.metadata["convention"] == "openinference" and case.metadata["llm_call_count"] == gt["llm_call_count"]
    assert _text(case.input) == _text(gt["user_input"])
    assert _text(case.output) == _text(gt["final_output"])
    assert (case.model, case.request_model) == (gt["response_model"], gt["request_model"])
    assert case.error is gt["error"]
    assert case.system_prompt == gt["system_prompt"]
    assert case.provider == "openai" and case.service_name == f"corpus-{report.entry['instrumentation']}"
    assert case.scope == "trace" and case.span_id and case.latency_ms and case.latency_ms > 0
    if gt["error"]:
        assert case.output is None and case.input_tokens is None and case.output_tokens is None
    else:
        assert (case.input_tokens, case.output_tokens) == (gt["input_tokens"], gt["output_tokens"])
        expected_total = None if gt["input_tokens"] is None else gt["input_tokens"] + gt["output_tokens"]
        assert case.token_count == expected_total


def test_retrieved_documents(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    case = report.trace_case
    if case is None:
        return
    expected = [(d["id"], _text(d["content"]), d["score"]) for d in gt["retrieved_documents"]]
    assert [(d.id, _text(d.content), d.score) for d in case.context] == expected


def test_llm_calls_match_each_api_call(report: FileReport) -> None:
    for case, api in api_call_cases(report):
        assert case.metadata["convention"] == "openinference"
        assert _text(case.output) == _text(api.get("output_text"))
        if "response_id" in api and (not api["stream"] or "response_id" in case.metadata):
            assert case.metadata["response_id"] == api["response_id"]  # LangChain streaming drops the id
        if api.get("usage_reported_to_client"):
            assert (case.input_tokens, case.output_tokens) == (api["input_tokens"], api["output_tokens"])
        else:
            assert (case.input_tokens, case.output_tokens) == (None, None)


# -- unit tests: attribute shapes the convention allows -----------------------------------------------------------

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = OpenInferenceMapper()
Q, A = "What is the capital of France?", "Paris."


def oi_span(kind: str, attributes: dict[str, Any] | None = None, *, span_id: str | None = None,
            parent: str | None = None, start_ms: float = 0.0, duration_ms: float = 10.0,
            status: int = STATUS_UNSET, events: tuple[SpanEvent, ...] = (), name: str | None = None) -> SpanRecord:
    record = span(span_id=span_id, parent=parent, name=name or kind.lower(), start_ms=start_ms,
                  duration_ms=duration_ms, status_code=status,
                  attributes={"openinference.span.kind": kind, **(attributes or {})})
    return replace(record, events=events) if events else record


def flat_llm(question: str | None = Q, answer: str | None = A, **extra: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"llm.model_name": "gpt-4o-mini-2024-07-18", "llm.system": "openai",
                             "llm.invocation_parameters": json.dumps({"model": "gpt-4o-mini", "temperature": 0}),
                             "llm.token_count.prompt": 10, "llm.token_count.completion": 3,
                             "llm.token_count.total": 13, "llm.input_messages.0.message.role": "system",
                             "llm.input_messages.0.message.content": "Be brief."}
    if question is not None:
        attrs |= {"llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": question}
    if answer is not None:
        attrs |= {"llm.output_messages.0.message.role": "assistant",
                  "llm.output_messages.0.message.content": answer}
    return attrs | extra


def run(*spans: SpanRecord) -> MappingResult:
    return MAPPER.map(AssembledTrace(trace_id=TRACE, spans=spans))


def split(result: MappingResult) -> tuple[list[EvalCase], EvalCase | None]:
    traces = [c for c in result.cases if c.scope == "trace"]
    assert len(traces) <= 1 and not result.warnings, result
    return [c for c in result.cases if c.scope == "llm_call"], traces[0] if traces else None


def test_single_llm_span_fields() -> None:
    s = oi_span("LLM", flat_llm(**{
        "llm.token_count.prompt_details.cache_read": 4, "llm.token_count.prompt_details.audio": 2,
        "llm.token_count.completion_details.reasoning": 1, "llm.finish_reason": "stop", "session.id": "sess-1",
        "user.id": "u-1", "metadata": json.dumps({"team": "search"}), "tag.tags": ["prod", "eu"]}), span_id="a1" * 8)
    (call,), whole = split(run(s))
    assert (call.input, call.output, call.system_prompt) == (Q, A, "Be brief.")
    assert [m.role for m in call.messages] == ["system", "user", "assistant"]
    assert (call.input_tokens, call.output_tokens, call.token_count) == (10, 3, 13)  # details are not added
    assert (call.model, call.request_model, call.provider) == ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "openai")
    assert call.tags == ("prod", "eu") and call.latency_ms == 10.0 and call.span_id == "a1" * 8
    assert call.metadata == {"convention": "openinference", "span_kind": "LLM", "finish_reasons": ["stop"],
                             "session_id": "sess-1", "user_id": "u-1", "metadata": {"team": "search"},
                             "invocation_parameters": {"model": "gpt-4o-mini", "temperature": 0},
                             "span_end_unix_nano": s.end_time_unix_nano}
    assert whole is not None
    assert (whole.input, whole.output, whole.token_count, whole.span_id) == (Q, A, 13, s.span_id)
    assert whole.metadata["session_id"] == "sess-1" and whole.tags == ("prod", "eu")


MESSAGE_SHAPES = {
    "flattened": {"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": Q,
                  "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": A},
    "array_dotted": {"llm.input_messages": [{"message.role": "user", "message.content": Q}],
                     "llm.output_messages": [{"message.role": "assistant", "message.content": A}]},
    "array_nested": {"llm.input_messages": [{"message": {"role": "user", "content": Q}}],
                     "llm.output_messages": [{"message": {"role": "assistant", "content": A}}]},
    "kvlist_indexed": {"llm.input_messages": {"0": {"message": {"role": "user", "content": Q}}},
                       "llm.output_messages": {"0": {"message.role": "assistant", "message.content": A}}},
    "json_string": {"llm.input_messages": json.dumps([{"message.role": "user", "message.content": Q}]),
                    "llm.output_messages": json.dumps([{"message": {"role": "assistant", "content": A}}])},
    "contents_parts": {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": Q,
        "llm.input_messages.0.message.contents.1.message_content.type": "image",
        "llm.input_messages.0.message.contents.1.message_content.image.image.url": "https://x/y.png",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.contents": [{"message_content": {"type": "text", "text": A}}]},
    "content_and_contents_of_the_same_text": {  # openinference-instrumentation-openai-agents 2.6 writes both
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": Q,
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": Q,
        "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": A,
        "llm.output_messages.0.message.contents.0.message_content.type": "text",
        "llm.output_messages.0.message.contents.0.message_content.text": A},
    "item_json_strings": {"llm.input_messages.0": json.dumps({"message.role": "user", "message.content": Q}),
                          "llm.output_messages": [json.dumps({"message": {"role": "assistant", "content": A}})]},
    "content_parts_list": {"llm.input_messages.0.message.role": "user",
                           "llm.input_messages.0.message.content": [{"type": "text", "text": Q}],
                           "llm.output_messages.0.message.content": A},
    "huge_index": {"llm.input_messages.999999999.message.role": "user",
                   "llm.input_messages.999999999.message.content": Q,
                   "llm.output_messages.7.message.role": "assistant", "llm.output_messages.7.message.content": A},
    "payload_only_openai": {
        "input.value": json.dumps({"model": "m", "messages": [{"role": "user", "content": Q}]}),
        "input.mime_type": "application/json",
        "output.value": json.dumps({"id": "r1", "model": "m-1", "choices": [{"message": {"role": "assistant",
                                                                                         "content": A}}]}),
        "output.mime_type": "application/json"},
    "payload_only_langchain": {
        "input.value": json.dumps({"messages": [[{"lc": 1, "type": "constructor", "id": ["x", "HumanMessage"],
                                                  "kwargs": {"content": Q, "type": "human"}}]]}),
        "output.value": json.dumps({"generations": [[{"text": A, "type": "ChatGeneration"}]]})},
    "payload_only_anthropic": {
        "input.value": json.dumps({"model": "claude", "messages": [{"role": "user", "content": [
            {"type": "text", "text": Q}]}]}),
        "output.value": json.dumps({"id": "msg_1", "model": "claude-x", "role": "assistant",
                                    "content": [{"type": "text", "text": A}]})},
    "payload_only_openai_responses": {
        "input.value": json.dumps({"model": "m", "input": Q, "instructions": "Be brief."}),
        "input.mime_type": "application/json",
        "output.value": json.dumps({"id": "resp_1", "model": "m-1", "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": A}]}]}),
        "output.mime_type": "application/json"},
    "legacy_completions": {"llm.prompts.0.prompt.text": Q, "llm.choices.0.completion.text": A},
    "legacy_completions_array": {"llm.prompts": [Q], "llm.choices": [{"completion.text": A}]},
}


@pytest.mark.parametrize("shape", MESSAGE_SHAPES, ids=list(MESSAGE_SHAPES))
def test_message_shapes(shape: str) -> None:
    (call,), whole = split(run(oi_span("LLM", MESSAGE_SHAPES[shape])))
    assert (call.input, call.output) == (Q, A)
    assert whole is not None and (whole.input, whole.output) == (Q, A)


def test_tool_calls_in_messages_and_array_form() -> None:
    first = oi_span("LLM", flat_llm(answer=None) | {"llm.output_messages": [{"message": {
        "role": "assistant", "tool_calls": [{"tool_call": {"id": "c1", "function": {
            "name": "get_weather", "arguments": '{"city": "Paris"}'}}}]}}]}, start_ms=0)
    second = oi_span("LLM", flat_llm(answer="18C.") | {
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "c1",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"city": "Paris"}',
        "llm.input_messages.3.message.role": "tool", "llm.input_messages.3.message.tool_call_id": "c1",
        "llm.input_messages.3.message.content": '{"temp": 18}'}, start_ms=20)
    (one, two), whole = split(run(first, second))
    assert one.output is None and one.tool_calls == (ToolCall("get_weather", {"city": "Paris"}, {"temp": 18}, "c1"),)
    assert two.output == "18C." and two.tool_calls == ()
    assert whole is not None and whole.tool_calls == one.tool_calls and whole.output == "18C."
    assert (whole.input_tokens, whole.output_tokens) == (20, 6)


def test_legacy_function_call_message_fields() -> None:
    s = oi_span("LLM", flat_llm(answer=None) | {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.function_call_name": "lookup",
        "llm.output_messages.0.message.function_call_arguments_json": '{"q": 1}'})
    (call,), _ = split(run(s))
    assert call.tool_calls == (ToolCall("lookup", {"q": 1}),)


def test_tool_spans_merge_by_id_name_and_langchain_payloads() -> None:
    root = oi_span("AGENT", {"input.value": Q, "output.value": "done"}, span_id="f" * 16, start_ms=0,
                   duration_ms=100, name="my-agent")
    ask = oi_span("LLM", flat_llm(answer=None) | {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Paris"}',
        "llm.output_messages.0.message.tool_calls.1.tool_call.id": "c2",
        "llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "time",
        "llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": "{}",
        "llm.output_messages.0.message.tool_calls.2.tool_call.id": "c3",
        "llm.output_messages.0.message.tool_calls.2.tool_call.function.name": "search",
        "llm.output_messages.0.message.tool_calls.2.tool_call.function.arguments": '{"q": "x"}'},
        parent=root.span_id, start_ms=1)
    by_id = oi_span("TOOL", {"tool.name": "weather", "tool_call.id": "c1", "input.value": "Paris",
                             "output.value": '{"temp": 18}', "output.mime_type": "application/json"},
                    parent=root.span_id, start_ms=10)
    by_name = oi_span("TOOL", {"tool.name": "time", "output.value": "noon"}, parent=root.span_id, start_ms=11)
    langchain = oi_span("TOOL", {"tool.name": "search", "input.value": "x", "output.value": json.dumps(
        {"type": "tool", "data": {"content": "found", "tool_call_id": "c3", "status": "error"}}),
        "output.mime_type": "application/json"}, parent=root.span_id, start_ms=12)
    unrequested = oi_span("TOOL", {"tool.name": "audit", "input.mime_type": "application/json", "input.value":
        json.dumps({"name": "audit", "args": {"level": 2}, "id": "c9", "type": "tool_call"}),
        "tool.parameters": json.dumps({"type": "object", "properties": {"level": {"type": "integer"}}})},
        parent=root.span_id, start_ms=13, status=STATUS_ERROR)
    _, whole = split(run(root, ask, by_id, by_name, langchain, unrequested))
    assert whole is not None and (whole.input, whole.output) == (Q, "done")
    assert whole.tool_calls == (
        ToolCall("weather", {"city": "Paris"}, {"temp": 18}, "c1"), ToolCall("time", {}, "noon", "c2"),
        ToolCall("search", {"q": "x"}, "found", "c3", error=True), ToolCall("audit", {"level": 2}, None, "c9", True))
    assert whole.metadata["agent_name"] == "my-agent" and whole.span_id == root.span_id
    assert whole.latency_ms == 100.0


def test_nested_llm_spans_count_one_call() -> None:
    outer = oi_span("LLM", flat_llm(**{"llm.model_name": "gpt-4o-mini"}), span_id="0" * 15 + "1", start_ms=0,
                    duration_ms=50)
    inner = oi_span("LLM", {"llm.token_count.prompt": 10, "llm.token_count.completion": 3,
                            "llm.response.model_name": "gpt-4o-mini-2024-07-18"},
                    parent=outer.span_id, start_ms=1, duration_ms=40)
    (call,), whole = split(run(outer, inner))
    assert call.span_id == inner.span_id and (call.input, call.output) == (Q, A)  # completed from the wrapper
    assert (call.input_tokens, call.output_tokens, call.model) == (10, 3, "gpt-4o-mini-2024-07-18")
    assert whole is not None and (whole.input_tokens, whole.output_tokens, whole.metadata["llm_call_count"]) == (
        10, 3, 1)


def test_wrapper_of_two_calls_is_not_copied_into_them() -> None:
    outer = oi_span("LLM", flat_llm(), span_id="0" * 15 + "1", duration_ms=50)
    retries = [oi_span("LLM", flat_llm(answer=None if i == 0 else A), parent=outer.span_id, start_ms=1 + 10 * i,
                       status=STATUS_ERROR if i == 0 else STATUS_UNSET) for i in range(2)]
    calls, whole = split(run(outer, *retries))
    assert [c.span_id for c in calls] == [r.span_id for r in retries]
    assert [c.error for c in calls] == [True, False] and calls[0].output is None
    assert whole is not None and whole.input_tokens == 20 and whole.error is True and whole.output == A


def test_sibling_spans_of_one_response_are_merged() -> None:
    body = json.dumps({"id": "chatcmpl-1", "model": "m-1", "choices": [{"message": {"role": "assistant",
                                                                                   "content": A}}]})
    a = oi_span("LLM", flat_llm(**{"output.value": body}), start_ms=0, duration_ms=20)
    b = oi_span("LLM", flat_llm(**{"output.value": body}), start_ms=5, duration_ms=10)
    later = oi_span("LLM", flat_llm(**{"output.value": body}), start_ms=100)  # a cached replay: its own call
    calls, whole = split(run(a, b, later))
    assert [c.span_id for c in calls] == [a.span_id, later.span_id]
    assert whole is not None and whole.input_tokens == 20


ROOT_INPUTS = {
    "text": Q,
    "json_input": json.dumps({"input": Q, "chat_history": []}),
    "json_question_with_context": json.dumps({"context": "[doc] ...", "question": Q}),
    "python_repr": repr({"query": Q}),
    "openai_messages": json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
                                                                                    "content": "hello"},
                                                {"role": "user", "content": Q}]}),
    "langgraph_tuples": json.dumps({"messages": [["user", Q]]}),
    "langchain_dump": json.dumps({"messages": [{"type": "human", "data": {"content": Q}}]}),
    "single_field": json.dumps({"topic": Q}),
    "json_string_literal": json.dumps(Q),
}


@pytest.mark.parametrize("shape", ROOT_INPUTS, ids=list(ROOT_INPUTS))
def test_question_from_root_chain_input(shape: str) -> None:
    mime = "text/plain" if shape == "text" else "application/json"
    root = oi_span("CHAIN", {"input.value": ROOT_INPUTS[shape], "input.mime_type": mime}, span_id="e" * 16)
    llm = oi_span("LLM", flat_llm(question=f"Context: ...\nQuestion: {Q}"), parent=root.span_id, start_ms=1)
    (call,), whole = split(run(root, llm))
    assert call.input == f"Context: ...\nQuestion: {Q}"
    assert whole is not None and whole.input == Q and whole.output == A  # root has no output: the last call's


ROOT_OUTPUTS = {
    "text": "Final.",
    "json_output": json.dumps({"output": "Final."}),
    "json_answer": json.dumps({"answer": "Final.", "sources": ["a"]}),
    "messages": json.dumps({"messages": [{"type": "human", "content": Q}, {"type": "ai", "content": "Final."}]}),
    "langchain_ai_dump": json.dumps({"type": "ai", "data": {"content": "Final."}}),
}


@pytest.mark.parametrize("shape", ROOT_OUTPUTS, ids=list(ROOT_OUTPUTS))
def test_answer_from_root_chain_output(shape: str) -> None:
    root = oi_span("CHAIN", {"input.value": Q, "output.value": ROOT_OUTPUTS[shape]}, span_id="e" * 16)
    llm = oi_span("LLM", flat_llm(), parent=root.span_id, start_ms=1)
    _, whole = split(run(root, llm))
    assert whole is not None and whole.output == "Final."


def test_unreadable_root_payload_falls_back_to_calls() -> None:
    root = oi_span("CHAIN", {"input.value": json.dumps({"a": 1, "b": [2]}), "input.mime_type": "application/json",
                             "output.value": "{broken", "output.mime_type": "application/json"}, span_id="e" * 16)
    _, whole = split(run(root, oi_span("LLM", flat_llm(), parent=root.span_id, start_ms=1)))
    assert whole is not None and (whole.input, whole.output) == (Q, A)


def test_root_output_that_is_an_object_repr_falls_back_to_calls() -> None:
    # LlamaIndex workflows (openinference-instrumentation-llama-index 4.6): the run's output.value is a repr
    root = oi_span("CHAIN", {"input.value": Q, "output.value": "StopEvent(result=AgentOutput(response=ChatMessage("
                             "role=<MessageRole.ASSISTANT: 'assistant'>, blocks=[TextBlock(text='Paris.')]), st..."},
                   span_id="e" * 16)
    _, whole = split(run(root, oi_span("LLM", flat_llm(), parent=root.span_id, start_ms=1)))
    assert whole is not None and (whole.input, whole.output) == (Q, A)


def test_llm_spans_that_record_no_exchange_are_not_calls() -> None:
    # LlamaIndex's OpenAI._prepare_chat_with_tools: LLM kind, no messages, no usage, beside the real call
    helper = oi_span("LLM", {"llm.model_name": "gpt-4o-mini", "input.value": json.dumps({"tools": ["<tool>"]}),
                             "input.mime_type": "application/json"}, start_ms=0, name="_prepare_chat_with_tools")
    result = run(helper, oi_span("LLM", flat_llm(), start_ms=1))
    (call,), whole = split(result)
    assert not result.not_evaluable and call.output == A
    assert whole is not None and whole.metadata["llm_call_count"] == 1
    alone = run(helper)  # nothing else: the call is still a case (model, timing), its content absent
    assert [(c.scope, c.input, c.output, c.model) for c in alone.cases] == [
        ("llm_call", None, None, "gpt-4o-mini"), ("trace", None, None, "gpt-4o-mini")]


def test_root_input_that_is_an_object_repr_falls_back_to_calls() -> None:
    # smolagents: a step's input.value is {"memory_step": "ActionStep(...)"}
    root = oi_span("CHAIN", {"input.value": json.dumps({"memory_step": "ActionStep(step_number=1, timing=None)"}),
                             "input.mime_type": "application/json"}, span_id="e" * 16)
    _, whole = split(run(root, oi_span("LLM", flat_llm(), parent=root.span_id, start_ms=1)))
    assert whole is not None and whole.input == Q


def test_a_default_object_repr_is_no_output() -> None:
    # OpenInference Groq on a stream: output.value is the stream object's repr, nothing else is recorded
    llm = oi_span("LLM", {"input.value": json.dumps({"messages": [{"role": "user", "content": Q}]}),
                          "input.mime_type": "application/json",
                          "output.value": "<groq.Stream object at 0x7f3f2d2d6690>"})
    result = run(llm)
    assert not result.not_evaluable and [(c.input, c.output) for c in result.cases] == [(Q, None), (Q, None)]


def test_llamaindex_tool_output_is_unwrapped() -> None:
    tool = oi_span("TOOL", {"tool.name": "get_weather", "input.value": json.dumps({"kwargs": {"city": "Paris"}}),
                            "input.mime_type": "application/json", "output.mime_type": "application/json",
                            "output.value": json.dumps({"blocks": [{"text": "{'temp': 18}"}],
                                                        "tool_name": "get_weather",
                                                        "raw_input": {"args": [], "kwargs": {"city": "Paris"}},
                                                        "raw_output": {"temp": 18}, "is_error": True})},
                   start_ms=0)
    _, whole = split(run(tool, oi_span("LLM", flat_llm(), start_ms=5)))
    assert whole is not None
    assert whole.tool_calls == (ToolCall("get_weather", {"city": "Paris"}, {"temp": 18}, error=True),)


def test_documents_shapes_and_fallbacks() -> None:
    flat = oi_span("RETRIEVER", {
        "retrieval.documents.0.document.id": 7, "retrieval.documents.0.document.content": "seven",
        "retrieval.documents.0.document.score": "0.9",
        "retrieval.documents.0.document.metadata": json.dumps({"source": "a"}),
        "retrieval.documents.1.document.content": "eight",
        "retrieval.documents.1.document.metadata": json.dumps({"score": 0.5, "id": "d8"})}, start_ms=0)
    array = oi_span("RETRIEVER", {"retrieval.documents": [{"document.id": "d9", "document.content": "nine",
                                                           "document.score": 0.1}]}, start_ms=1)
    payload_only = oi_span("RETRIEVER", {"output.value": json.dumps({"documents": [
        {"id": "d10", "page_content": "ten", "metadata": {"relevance_score": 0.3}}]}),
        "output.mime_type": "application/json"}, start_ms=2)
    ids_from_payload = oi_span("RETRIEVER", {
        "retrieval.documents.0.document.content": "eleven",
        "output.value": json.dumps({"documents": [{"id": "d11", "page_content": "eleven"}]})}, start_ms=3)
    llm = oi_span("LLM", flat_llm(), start_ms=10)
    _, whole = split(run(flat, array, payload_only, ids_from_payload, llm))
    assert whole is not None
    assert [(d.id, d.content, d.score) for d in whole.context] == [
        ("7", "seven", 0.9), ("d8", "eight", 0.5), ("d9", "nine", 0.1), ("d10", "ten", 0.3), ("d11", "eleven", None)]
    assert whole.context[0].metadata == {"source": "a"}


def test_reranker_output_replaces_retrieved_documents() -> None:
    retriever = oi_span("RETRIEVER", {"retrieval.documents.0.document.id": "a",
                                      "retrieval.documents.1.document.id": "b"}, start_ms=0)
    reranker = oi_span("RERANKER", {"reranker.input_documents.0.document.id": "a",
                                    "reranker.output_documents.0.document.id": "b",
                                    "reranker.output_documents.0.document.score": 0.99}, start_ms=1)
    _, whole = split(run(retriever, reranker, oi_span("LLM", flat_llm(), start_ms=2)))
    assert whole is not None and [(d.id, d.score) for d in whole.context] == [("b", 0.99)]


def test_not_evaluable_reasons() -> None:
    embeddings = run(oi_span("EMBEDDING", {"embedding.model_name": "e", "llm.token_count.prompt": 5}),
                     oi_span("RETRIEVER", {"retrieval.documents.0.document.id": "x"}))
    assert embeddings == MappingResult(not_evaluable=(
        NotEvaluable("no_inference_span", "openinference", "kinds: EMBEDDING,RETRIEVER"),))
    no_input = run(s := oi_span("LLM", flat_llm(question=None)))  # content absent: still cases, input None
    assert not no_input.not_evaluable and [(c.scope, c.input, c.output) for c in no_input.cases] == [
        ("llm_call", None, A), ("trace", None, A)]
    assert no_input.cases[0].span_id == s.span_id
    no_output = run(oi_span("LLM", flat_llm(answer=None)))
    assert not no_output.not_evaluable and [c.output for c in no_output.cases] == [None, None]
    (failed,), whole = split(run(oi_span("LLM", flat_llm(answer=None), status=STATUS_ERROR)))
    assert failed.error and failed.output is None and whole is not None and whole.error and whole.model is None
    assert failed.model == "gpt-4o-mini"  # the failed call reports no response model: the requested one


def test_exception_events_and_status() -> None:
    boom = (SpanEvent("exception", 0, {"exception.type": "TimeoutError"}),)
    (unset,), _ = split(run(oi_span("LLM", flat_llm(), events=boom)))
    (handled,), _ = split(run(oi_span("LLM", flat_llm(), events=boom, status=STATUS_OK)))
    assert unset.error is True and handled.error is False


def test_evaluator_spans_are_ignored() -> None:
    app = oi_span("LLM", flat_llm(), start_ms=0)
    judge = oi_span("EVALUATOR", {"input.value": "judge this"}, span_id="d" * 16, start_ms=20)
    judge_llm = oi_span("LLM", flat_llm(question="Is 'Paris.' correct?", answer="yes"), parent=judge.span_id,
                        start_ms=21)
    calls, whole = split(run(app, judge, judge_llm))
    assert [c.span_id for c in calls] == [app.span_id] and whole is not None and whole.output == A
    only_judge = run(judge, judge_llm)
    assert [n.reason for n in only_judge.not_evaluable] == ["no_inference_span"]


def test_token_and_model_variants() -> None:
    total_only = {k: v for k, v in flat_llm().items() if not k.startswith("llm.token_count.")}
    total_only |= {"llm.token_count.total": 42, "llm.cost.prompt": 0.25, "llm.cost.completion": "0.5",
                   "llm.request.model_name": "req", "llm.response.model_name": "resp", "llm.provider": "azure",
                   "llm.system": "openai"}
    (call,), whole = split(run(oi_span("LLM", total_only)))
    assert (call.input_tokens, call.output_tokens, call.token_count) == (None, None, 42)
    assert (call.request_model, call.model, call.provider) == ("req", "resp", "azure.ai.openai")
    assert call.cost_usd == 0.75
    assert whole is not None and whole.token_count == 42 and whole.input_tokens is None and whole.cost_usd == 0.75
    mistral = {k: v for k, v in flat_llm().items() if k != "llm.system"} | {"llm.system": "mistralai"}
    (call,), _ = split(run(oi_span("LLM", mistral)))
    assert call.provider == "mistral_ai"


def test_routing_order_and_delegation() -> None:
    router = MapperRouter([OpenInferenceMapper(), GenAISemconvMapper()])
    both = chat_span(attributes={"openinference.span.kind": "LLM", **flat_llm(answer="From OI.")})
    assert {c.metadata["convention"] for c in router.map(AssembledTrace(TRACE, (both,))).cases} == {"openinference"}
    genai_only = chat_span()
    assert not OpenInferenceMapper().matches(AssembledTrace(TRACE, (genai_only,)))
    assert {c.metadata["convention"] for c in router.map(AssembledTrace(TRACE, (genai_only,))).cases} == {
        "genai_semconv"}
    chain = oi_span("CHAIN", {"input.value": Q}, span_id="c" * 16)
    mixed = AssembledTrace(TRACE, (chain, replace(genai_only, parent_span_id=chain.span_id)))
    assert OpenInferenceMapper().matches(mixed)
    assert {c.metadata["convention"] for c in router.map(mixed).cases} == {"genai_semconv"}


class _Hostile(dict[str, Any]):
    def get(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("hostile")

    def __contains__(self, key: object) -> bool:
        raise RuntimeError("hostile")


def test_hostile_attributes_never_raise() -> None:
    trace = AssembledTrace(TRACE, (replace(span(), attributes=_Hostile()),))
    assert OpenInferenceMapper().matches(trace) is False
    assert isinstance(OpenInferenceMapper().map(trace), MappingResult)
