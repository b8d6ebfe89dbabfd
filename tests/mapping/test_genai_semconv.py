"""GenAISemconvMapper and MapperRouter: case fields, merging rules, not-evaluable rules, robustness."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evald.case import Document, ToolCall
from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.router import MapperRouter, default_mappers
from evald.model import STATUS_ERROR, AssembledTrace, SpanEvent, SpanRecord
from evald.testing import chat_span, log, span

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = GenAISemconvMapper()


def msgs(*items: tuple[str, list[dict[str, Any]]]) -> str:
    return json.dumps([{"role": role, "parts": parts} for role, parts in items])


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def tool_call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": args}


def run(*spans: SpanRecord, logs: tuple[Any, ...] = ()) -> MappingResult:
    return MAPPER.map(AssembledTrace(trace_id=TRACE, spans=spans, logs=logs))


def by_scope(result: MappingResult, scope: str) -> list[Any]:
    return [c for c in result.cases if c.scope == scope]


def test_single_chat_span() -> None:
    s = chat_span(span_id="00000000000000a1", attributes={
        "gen_ai.response.id": "chatcmpl-1", "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.system_instructions": json.dumps([text("Be brief.")]), "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18"})
    result = run(s)
    assert not result.not_evaluable and not result.warnings
    (call,), (whole,) = by_scope(result, "llm_call"), by_scope(result, "trace")
    assert (call.input, call.output, call.span_id, call.latency_ms) == ("What is the capital of France?", "Paris.",
                                                                         "00000000000000a1", 10.0)
    assert (call.input_tokens, call.output_tokens, call.token_count) == (10, 3, 13)
    assert (call.model, call.request_model, call.provider) == ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "openai")
    assert call.system_prompt == "Be brief." and call.messages[0].role == "system" and len(call.messages) == 3
    assert call.metadata == {"convention": "genai_semconv", "operation": "chat", "response_id": "chatcmpl-1",
                             "finish_reasons": ["stop"], "span_end_unix_nano": 1_700_000_000_010_000_000}
    assert call.service_name == "test-service" and call.trace_id == TRACE
    assert (whole.input, whole.output, whole.span_id, whole.error) == (call.input, call.output, s.span_id, False)
    assert whole.metadata["llm_call_count"] == 1


def test_tool_loop_merges_by_call_id_without_double_counting() -> None:
    root = span(span_id="00000000000000f0", name="invoke_agent weather", duration_ms=100, attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather-agent",
        "gen_ai.input.messages": msgs(("user", [text("Weather in Paris?")])),
        "gen_ai.output.messages": msgs(("assistant", [text("Rainy, 57\\u00b0F.")]))})
    first = chat_span(span_id="00000000000000f1", parent=root.span_id, start_ms=1, answer=None, attributes={
        "gen_ai.input.messages": msgs(("user", [text("Weather in Paris?")])),
        "gen_ai.output.messages": msgs(("assistant", [tool_call("c1", "get_weather", {"city": "Paris"})]))})
    tool = span(span_id="00000000000000f2", parent=root.span_id, start_ms=20, attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.arguments": '{"city": "Paris"}', "gen_ai.tool.call.result": '{"cond": "rainy"}'})
    second = chat_span(span_id="00000000000000f3", parent=root.span_id, start_ms=40, answer="Rainy.", attributes={
        "gen_ai.input.messages": msgs(
            ("user", [text("Weather in Paris?")]), ("assistant", [tool_call("c1", "get_weather", '{"city":"Paris"}')]),
            ("tool", [{"type": "tool_call_response", "id": "c1", "response": '{"cond": "rainy"}'}]))})
    result = run(second, tool, root, first)  # arrival order does not matter
    whole = by_scope(result, "trace")[0]
    assert whole.tool_calls == (ToolCall("get_weather", {"city": "Paris"}, {"cond": "rainy"}, "c1"),)
    assert (whole.input, whole.output, whole.span_id) == ("Weather in Paris?", "Rainy, 57°F.", root.span_id)
    assert whole.latency_ms == 100.0 and whole.input_tokens == 20 and whole.output_tokens == 6
    assert whole.metadata["agent_name"] == "weather-agent"
    calls = by_scope(result, "llm_call")
    assert [c.span_id for c in calls] == [first.span_id, second.span_id]
    assert calls[0].output is None and calls[0].tool_calls == whole.tool_calls  # enriched with the result
    assert calls[0].metadata["agent_name"] == "weather-agent"
    assert [m.role for m in whole.messages] == ["user", "assistant", "tool", "assistant"]


def test_tool_results_from_later_inputs_and_id_less_tool_spans() -> None:
    first = chat_span(span_id="0000000000000001", answer=None, attributes={"gen_ai.output.messages": msgs(
        ("assistant", [tool_call("a", "search", {"q": "x"}), tool_call("b", "calc", {"e": "1+1"})]))})
    tool = span(span_id="0000000000000002", start_ms=15, status_code=STATUS_ERROR, attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calc", "gen_ai.tool.call.result": "2"})
    second = chat_span(span_id="0000000000000003", start_ms=30, attributes={"gen_ai.input.messages": msgs(
        ("user", [text("q")]), ("tool", [{"type": "tool_call_response", "id": "a", "result": {"hits": 3}}]))})
    whole = by_scope(run(first, tool, second), "trace")[0]
    assert whole.tool_calls == (ToolCall("search", {"q": "x"}, {"hits": 3}, "a"),
                                ToolCall("calc", {"e": "1+1"}, "2", "b", error=True))


def test_previous_turn_tool_calls_are_not_this_traces_calls() -> None:
    history = msgs(("user", [text("old question")]), ("assistant", [tool_call("old", "f", {})]),
                   ("tool", [{"type": "tool_call_response", "id": "old", "response": "r"}]),
                   ("assistant", [text("old answer")]), ("user", [text("new question")]),
                   ("assistant", [tool_call("new", "g", {"k": 1})]),
                   ("tool", [{"type": "tool_call_response", "id": "new", "response": "ok"}]))
    whole = by_scope(run(chat_span(attributes={"gen_ai.input.messages": history})), "trace")[0]
    assert whole.input == "new question"
    assert whole.tool_calls == (ToolCall("g", {"k": 1}, "ok", "new"),)


def test_embeddings_only_trace_is_not_evaluable() -> None:
    emb = span(attributes={"gen_ai.operation.name": "embeddings", "gen_ai.usage.input_tokens": 14})
    result = run(emb)
    assert result.cases == ()
    assert [(n.reason, n.scope) for n in result.not_evaluable] == [("no_inference_span", "trace")]


def test_trace_model_falls_back_to_the_request_model_of_a_call_that_answered() -> None:
    # Strands and Semantic Kernel record gen_ai.request.model only
    answered = chat_span(attributes={"gen_ai.response.model": None})
    whole = by_scope(run(answered), "trace")[0]
    assert (whole.model, whole.request_model) == ("gpt-4o-mini", "gpt-4o-mini")


def test_errored_call_without_output_is_evaluable() -> None:
    failed = chat_span(answer=None, status_code=STATUS_ERROR, attributes={
        "error.type": "<class 'openai.InternalServerError'>", "gen_ai.response.model": None,
        "gen_ai.usage.input_tokens": None, "gen_ai.usage.output_tokens": None})
    result = run(failed)
    assert not result.not_evaluable
    whole = by_scope(result, "trace")[0]
    assert (whole.output, whole.error, whole.model, whole.request_model) == (None, True, None, "gpt-4o-mini")
    assert (whole.input_tokens, whole.output_tokens, whole.token_count) == (None, None, None)
    assert by_scope(result, "llm_call")[0].model == "gpt-4o-mini"  # llm_call falls back to the request model
    only_error_type = chat_span(answer=None, attributes={"error.type": "timeout"})
    assert by_scope(run(only_error_type), "trace")[0].error is True


def test_missing_output_and_missing_input_still_give_cases() -> None:
    """Content not recorded is absent (None), not a reason to drop the call: its model, tokens and timing are
    scored, content metrics skip (evald/pipeline/scoring.py)."""
    no_output = chat_span(span_id="00000000000000b1", answer=None)
    result = run(no_output)
    assert result.not_evaluable == ()
    assert [(c.scope, c.span_id, c.input, c.output) for c in result.cases] == [
        ("llm_call", "00000000000000b1", "What is the capital of France?", None),
        ("trace", "00000000000000b1", "What is the capital of France?", None)]
    no_input = chat_span(attributes={"gen_ai.input.messages": msgs(("system", [text("sys only")]))})
    cases = run(no_input).cases
    assert [c.input for c in cases] == [None, None] and cases[0].system_prompt == "sys only"


def test_content_from_log_records_joined_by_span_id() -> None:
    bare = span(span_id="00000000000000c1", attributes={"gen_ai.operation.name": "chat",
                                                        "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 5})
    details = log(TRACE, "00000000000000c1", "gen_ai.client.inference.operation.details", attributes={
        "gen_ai.input.messages": [{"role": "user", "parts": [text("From logs?")]}],
        "gen_ai.output.messages": [{"role": "assistant", "parts": [text("Yes.")], "finish_reason": "stop"}],
        "gen_ai.system_instructions": [text("Sys.")], "gen_ai.response.model": "m-2024"})
    other = log(TRACE, "00000000000000ff", "gen_ai.client.inference.operation.details",
                attributes={"gen_ai.output.messages": [{"role": "assistant", "parts": [text("wrong span")]}]})
    whole = by_scope(run(bare, logs=(other, details)), "trace")[0]
    assert (whole.input, whole.output, whole.system_prompt, whole.model) == ("From logs?", "Yes.", "Sys.", "m-2024")
    assert whole.input_tokens == 5


def test_deprecated_attributes_and_span_events() -> None:
    old = span(attributes={"gen_ai.system": "vertex_ai", "gen_ai.request.model": "gemini",
                           "gen_ai.usage.prompt_tokens": "12", "gen_ai.usage.completion_tokens": 4})
    old = replace(old, events=(
        SpanEvent("gen_ai.user.message", 1, {"content": "Hi?"}),
        SpanEvent("gen_ai.choice", 2, {"index": 0, "finish_reason": "stop", "message": '{"content": "Hello."}'}),
    ))
    call = by_scope(run(old), "llm_call")[0]
    assert (call.input, call.output, call.provider) == ("Hi?", "Hello.", "gcp.vertex_ai")
    assert (call.input_tokens, call.output_tokens, call.metadata["finish_reasons"]) == (12, 4, ["stop"])


def test_retrieval_documents_and_token_sums_skip_embeddings() -> None:
    root = span(span_id="00000000000000d0", duration_ms=50, attributes={"gen_ai.operation.name": "invoke_workflow",
                                                                        "gen_ai.workflow.name": "rag"})
    emb = span(parent=root.span_id, start_ms=1, attributes={"gen_ai.operation.name": "embeddings",
                                                            "gen_ai.usage.input_tokens": 9})
    retrieval = span(parent=root.span_id, start_ms=2, attributes={
        "gen_ai.operation.name": "retrieval",
        "gen_ai.retrieval.documents": '[{"id":"kb-001","score":0.72},{"id":"kb-002","score":0.3,'
                                      '"content":"text","metadata":{"source":"a.md"}}]'})
    chat = chat_span(parent=root.span_id, start_ms=5, input_tokens=75, output_tokens=20)
    whole = by_scope(run(root, emb, retrieval, chat), "trace")[0]
    assert whole.context == (Document("kb-001", None, 0.72), Document("kb-002", "text", 0.3, {"source": "a.md"}))
    assert (whole.input_tokens, whole.output_tokens, whole.token_count) == (75, 20, 95)
    assert whole.metadata["workflow_name"] == "rag" and whole.span_id == root.span_id


def test_trace_without_root_uses_earliest_genai_span_and_extent() -> None:
    a = chat_span(span_id="00000000000000e1", parent="ffffffffffffffff", start_ms=10, duration_ms=5)
    b = chat_span(span_id="00000000000000e2", parent="ffffffffffffffff", start_ms=30, duration_ms=10,
                  answer="Final.", attributes={"gen_ai.response.model": "late-model"})
    whole = by_scope(run(b, a), "trace")[0]
    assert (whole.span_id, whole.output, whole.model) == (a.span_id, "Final.", "late-model")
    assert whole.latency_ms == pytest.approx(30.0, abs=0.01)


def test_garbage_values_give_none_not_errors() -> None:
    s = chat_span(attributes={"gen_ai.usage.input_tokens": -5, "gen_ai.usage.output_tokens": "abc",
                              "gen_ai.input.messages": "plain question", "gen_ai.output.messages": [1, None, "x"],
                              "gen_ai.response.finish_reasons": 7, "gen_ai.provider.name": ["x"],
                              "gen_ai.retrieval.documents": "nope"})
    result = run(s)
    call = by_scope(result, "llm_call")[0]
    assert (call.input, call.output, call.input_tokens, call.output_tokens, call.provider) == (
        "plain question", "x", None, None, None)
    truncated = chat_span(attributes={"gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "te'})
    assert [c.input for c in run(truncated).cases] == [None, None]  # truncated JSON is no text
    assert any("retrieval.documents" in w for w in result.warnings)


# -- router ------------------------------------------------------------------------------------------------------


class _Boom:
    name: ClassVar[str] = "boom"

    def matches(self, trace: AssembledTrace) -> bool:
        return True

    def map(self, trace: AssembledTrace) -> MappingResult:
        raise RuntimeError("bug")


class _Never:
    name: ClassVar[str] = "never"

    def matches(self, trace: AssembledTrace) -> bool:
        return False

    def map(self, trace: AssembledTrace) -> MappingResult:
        raise AssertionError("not routed here")


def test_router() -> None:
    genai = AssembledTrace(TRACE, (chat_span(),))
    plain = AssembledTrace(TRACE, (span(attributes={"http.method": "GET"}),))
    router = MapperRouter(default_mappers())
    assert [m.name for m in router.mappers][-1] == "genai_semconv"  # the fallback convention comes last
    assert len(router.map(genai).cases) == 2
    assert router.map(plain) == MappingResult()
    assert MapperRouter([_Never(), GenAISemconvMapper()]).map(genai).cases
    crashed = MapperRouter([_Boom(), GenAISemconvMapper()]).map(genai)
    assert crashed.cases == () and crashed.not_evaluable == (
        NotEvaluable("mapper_error", "boom", "RuntimeError in boom"),)


# -- properties ------------------------------------------------------------------------------------------------

KEYS = ["gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
        "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.model", "gen_ai.request.model",
        "gen_ai.system", "gen_ai.provider.name", "gen_ai.prompt", "gen_ai.completion", "gen_ai.prompt.0.content",
        "gen_ai.tool.call.id", "gen_ai.tool.name", "gen_ai.tool.call.result", "gen_ai.retrieval.documents",
        "error.type", "gen_ai.response.finish_reasons", "gen_ai.agent.name", "llm.request.type"]
OPS = st.sampled_from(["chat", "text_completion", "generate_content", "embeddings", "execute_tool", "retrieval",
                       "invoke_agent", "invoke_workflow", "", "other"])
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.binary(max_size=8)
json_like = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.sampled_from(["role", "parts", "type", "content", "id", "name",
                                                            "arguments", "response", "result", "score"]), inner,
                                           max_size=4), max_leaves=15)
soup = st.text(alphabet="[]{}'\":,rolecntx ", max_size=40)
values = json_like | OPS | st.builds(lambda v: json.dumps(v, default=repr), json_like) | soup
attr_maps = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), values, max_size=8)


@st.composite
def traces(draw: st.DrawFn) -> AssembledTrace:
    count = draw(st.integers(min_value=0, max_value=6))
    ids = [f"{i + 1:016x}" for i in range(count)]
    spans = []
    for i, span_id in enumerate(ids):
        attrs = draw(attr_maps)
        if draw(st.booleans()):
            attrs["gen_ai.operation.name"] = draw(OPS)
        parent = draw(st.none() | st.sampled_from([*ids, "deadbeefdeadbeef"]))
        start = draw(st.integers(min_value=0, max_value=10**19))
        events = tuple(SpanEvent(draw(st.sampled_from(["gen_ai.choice", "gen_ai.user.message", "x"])), 0,
                                 draw(attr_maps)) for _ in range(draw(st.integers(0, 2))))
        spans.append(SpanRecord(TRACE, span_id, parent, f"s{i}", 1, start, draw(st.integers(0, 10**19)), attrs,
                                events, draw(st.integers(0, 2))))
    logs = tuple(log(TRACE, draw(st.none() | st.sampled_from(ids or ["x"])),
                     draw(st.sampled_from(["gen_ai.client.inference.operation.details", "gen_ai.choice", ""])),
                     draw(attr_maps), body=draw(json_like)) for _ in range(draw(st.integers(0, 3))))
    return AssembledTrace(TRACE, tuple(spans), logs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_map_never_raises(trace: AssembledTrace) -> None:
    result = MAPPER.map(trace)
    assert isinstance(result, MappingResult)
    assert all(c.scope in ("llm_call", "trace") for c in result.cases)
    assert all(isinstance(n, NotEvaluable) for n in result.not_evaluable)
    if MAPPER.matches(trace):
        assert result.cases or result.not_evaluable
    assert len([c for c in result.cases if c.scope == "trace"]) <= 1
    assert not [w for w in result.warnings if "unreadable" in w], result.warnings  # a caught exception is a bug
    routed = MapperRouter(default_mappers()).map(trace)
    assert all(n.reason != "mapper_error" for n in routed.not_evaluable)


parts = st.one_of(
    st.builds(lambda c: {"type": "text", "content": c}, st.text(max_size=15) | scalars),
    st.builds(lambda i, n, a: {"type": "tool_call", "id": i, "name": n, "arguments": a},
              st.sampled_from(["c1", "c2", None, 3]), st.text(max_size=5) | scalars, json_like | st.text(max_size=9)),
    st.builds(lambda i, k, r: {"type": "tool_call_response", "id": i, k: r}, st.sampled_from(["c1", "c2", None]),
              st.sampled_from(["response", "result"]), json_like),
    json_like,
)
messages = st.lists(st.builds(lambda r, p: {"role": r, "parts": p},
                              st.sampled_from(["user", "assistant", "tool", "system", None, 1]),
                              st.lists(parts, max_size=3)), max_size=4)
message_values = messages | st.builds(lambda m: json.dumps(m, default=repr), messages) | values


@settings(max_examples=200, deadline=None)
@given(attr_maps, st.sampled_from(["chat", "text_completion", "generate_content"]), message_values, message_values)
def test_inference_span_with_random_attributes(attrs: dict[str, Any], op: str, inp: Any, out: Any) -> None:
    attrs.update({"gen_ai.operation.name": op, "gen_ai.input.messages": inp, "gen_ai.output.messages": out})
    result = MAPPER.map(AssembledTrace(TRACE, (span(attributes=attrs),)))
    assert result.cases or result.not_evaluable
    assert not [w for w in result.warnings if "unreadable" in w], result.warnings
    for case in result.cases:
        assert case.input_tokens is None or case.input_tokens >= 0
        assert case.input is None or isinstance(case.input, str)


def test_streaming_time_to_first_chunk_feeds_time_to_first_token() -> None:
    from evald.metrics.operational.time_to_first_token import TimeToFirstTokenMetric

    chat = chat_span()
    streamed = replace(chat, attributes={**chat.attributes, "gen_ai.response.time_to_first_chunk": 0.25})
    (llm_case,) = [c for c in GenAISemconvMapper().map(AssembledTrace(TRACE, (streamed,))).cases
                   if c.scope == "llm_call"]
    assert llm_case.metadata["time_to_first_token_ms"] == 250.0
    score = TimeToFirstTokenMetric(options={"max_ms": 500}).measure(llm_case)
    assert score is not None and score.passed
