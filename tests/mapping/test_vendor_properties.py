"""Property tests: the vendor normalisation (pydantic-ai, logfire, Langfuse) and the GenAI mapper reading it never
raise, whatever the attributes, payloads or span tree; spans without vendor keys pass through untouched."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping import langfuse as lf
from evald.mapping import vendor_payloads as vendor
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.router import MapperRouter, default_mappers
from evald.model import AssembledTrace, SpanRecord

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = GenAISemconvMapper()
ROUTER = MapperRouter(default_mappers())

VENDOR_KEYS = [
    "events", "all_messages_events", "pydantic_ai.all_messages", "final_result", "tool_arguments", "tool_response",
    "request_data", "response_data", "agent_name", "logfire.tags", "gen_ai.aggregated_usage.input_tokens",
    "gen_ai.aggregated_usage.output_tokens", "gen_ai.usage.partial.input_tokens",
    "langfuse.observation.type", "langfuse.observation.input", "langfuse.observation.output",
    "langfuse.observation.model.name", "langfuse.observation.usage_details", "langfuse.observation.level",
    "langfuse.observation.status_message", "langfuse.trace.input", "langfuse.trace.output", "langfuse.trace.name",
    "langfuse.session.id", "session.id",
]
GENAI_KEYS = [
    "gen_ai.operation.name", "gen_ai.system", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
    "gen_ai.response.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.input.messages",
    "gen_ai.output.messages", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result", "gen_ai.retrieval.documents", "error.type",
]
WORDS = ["generation", "span", "agent", "tool", "retriever", "embedding", "chain", "event", "chat", "invoke_agent",
         "execute_tool", "chat_completions", "ERROR", "LLM", "user", "assistant", "tool", "system", "gen_ai.choice",
         "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", ""]
PAYLOAD_KEYS = ["event.name", "role", "content", "message", "index", "tool_calls", "id", "name", "function",
                "arguments", "messages", "model", "prompt", "input", "system", "usage", "prompt_tokens",
                "completion_tokens", "input_tokens", "output_tokens", "combined_chunk_content", "text", "parts", "type",
                "args", "kwargs", "documents", "page_content", "score", "output", "result"]
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.binary(max_size=8)
json_like = st.recursive(scalars | st.sampled_from(WORDS), lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(PAYLOAD_KEYS), inner, max_size=5), max_leaves=20)
soup = st.text(alphabet="[]{}'\":,rolecntxargs \\", max_size=40)
values = json_like | st.builds(lambda v: json.dumps(v, default=repr), json_like) | soup
attr_maps = st.dictionaries(st.sampled_from(VENDOR_KEYS + GENAI_KEYS) | st.text(max_size=8), values, max_size=9)


@st.composite
def traces(draw: st.DrawFn) -> AssembledTrace:
    count = draw(st.integers(min_value=0, max_value=6))
    ids = [f"{i + 1:016x}" for i in range(count)]
    spans = []
    for i, span_id in enumerate(ids):
        attrs = draw(attr_maps)
        if draw(st.booleans()):
            attrs["langfuse.observation.type"] = draw(st.sampled_from(WORDS))
        parent = draw(st.none() | st.sampled_from([*ids, "deadbeefdeadbeef"]))
        start = draw(st.integers(0, 10**12))
        spans.append(SpanRecord(TRACE, span_id, parent, f"s{i}", 1, start, start + draw(st.integers(-5, 10**9)),
                                attrs, (), draw(st.integers(0, 2)), scope_name=draw(st.sampled_from(["", "a", "b"]))))
    return AssembledTrace(TRACE, tuple(spans))


def check(result: MappingResult) -> None:
    assert isinstance(result, MappingResult)
    assert all(isinstance(n, NotEvaluable) and n.reason != "mapper_error" for n in result.not_evaluable)
    assert len([c for c in result.cases if c.scope == "trace"]) <= 1
    for case in result.cases:
        # a case for every call, whatever it recorded: absent content is None, never a blank string
        assert case.input is None or (isinstance(case.input, str) and case.input.strip())
        assert case.output is None or isinstance(case.output, str)
        for count in (case.input_tokens, case.output_tokens, case.token_count):
            assert count is None or count >= 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_mapper_never_raises(trace: AssembledTrace) -> None:
    matched = MAPPER.matches(trace)
    result = MAPPER.map(trace)
    check(result)
    assert not [w for w in result.warnings if "unreadable" in w or "de-duplicated" in w], result.warnings
    if matched:
        assert result.cases or result.not_evaluable
    check(ROUTER.map(trace))


@settings(max_examples=300, deadline=None)
@given(attr_maps)
def test_normalize_is_total_and_keeps_span_values(attrs: dict[str, Any]) -> None:
    record = SpanRecord(TRACE, "00000000000000a1", None, "s", 1, 0, 1, attrs)
    out = vendor.normalize(record)
    assert all(out.attributes[k] is v for k, v in attrs.items())  # what the span carried always wins
    assert vendor.is_candidate(record) in (True, False)
    assert lf.operation(attrs) in (None, "chat", "embeddings", "invoke_agent", "execute_tool", "retrieval",
                                   "invoke_workflow")
    if not any(k in attrs for k in VENDOR_KEYS[:7] + ["langfuse.observation.type", "langfuse.trace.input",
                                                       "langfuse.trace.output"]) and (
            "gen_ai.tool.name" not in attrs or "gen_ai.operation.name" in attrs):
        assert out is record


@settings(max_examples=300, deadline=None)
@given(json_like | values)
def test_message_events_are_total(payload: Any) -> None:
    for event in vendor.message_events(payload):
        assert event.name in ("gen_ai.choice", "gen_ai.system.message", "gen_ai.user.message",
                              "gen_ai.assistant.message", "gen_ai.tool.message")
