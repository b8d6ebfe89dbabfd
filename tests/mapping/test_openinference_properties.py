"""Property tests: random OpenInference attribute maps and span trees never make the mapper raise or misbehave."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openinference import OpenInferenceMapper
from evald.mapping.openinference_fields import indexed, messages
from evald.mapping.openinference_payloads import answer_text, messages_of, output_messages_of, user_text
from evald.mapping.router import MapperRouter
from evald.model import AssembledTrace, SpanEvent, SpanRecord

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = OpenInferenceMapper()
KINDS = st.sampled_from(["LLM", "CHAIN", "AGENT", "TOOL", "RETRIEVER", "RERANKER", "EMBEDDING", "EVALUATOR",
                         "GUARDRAIL", "PROMPT", "UNKNOWN", "llm", "", "other"])
KEYS = [
    "input.value", "input.mime_type", "output.value", "output.mime_type", "llm.input_messages", "llm.output_messages",
    "llm.input_messages.0.message.role", "llm.input_messages.0.message.content",
    "llm.input_messages.1.message.contents.0.message_content.text", "llm.input_messages.x.message.role",
    "llm.input_messages.0.message.tool_calls.0.tool_call.id", "llm.input_messages.2.message.tool_call_id",
    "llm.output_messages.0.message.role", "llm.output_messages.0.message.content",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id", "llm.output_messages.0.message",
    "llm.model_name", "llm.request.model_name", "llm.response.model_name", "llm.provider", "llm.system",
    "llm.invocation_parameters", "llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total",
    "llm.prompts.0.prompt.text", "llm.choices", "llm.function_call", "llm.finish_reason",
    "retrieval.documents", "retrieval.documents.0.document.id", "retrieval.documents.0.document.score",
    "retrieval.documents.0.document.metadata", "reranker.output_documents.0.document.content",
    "tool.name", "tool.parameters", "tool_call.id", "tool.id", "session.id", "user.id", "metadata", "tag.tags",
    "agent.name", "gen_ai.operation.name", "gen_ai.input.messages",
]
ROLES = st.sampled_from(["user", "assistant", "system", "tool", "human", "ai", "AIMessageChunk"])
scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.binary(max_size=8)
           | ROLES)
NAMES = st.sampled_from(["role", "content", "type", "id", "name", "messages", "message", "kwargs", "data", "lc",
                         "tool_calls", "args", "function", "arguments", "choices", "generations", "text", "input",
                         "output", "question", "documents", "page_content", "metadata", "score", "tool_call_id",
                         "message.role", "message.content", "document.id", "0", "1"])
json_like = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(NAMES, inner, max_size=4), max_leaves=15)
soup = st.text(alphabet="[]{}'\":,.0123rolecntxmsg ", max_size=40)
values = json_like | KINDS | st.builds(lambda v: json.dumps(v, default=repr), json_like) | soup
attr_maps = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=10), values, max_size=10)


#: plausible spans per kind, that the random maps then mutate (so that generated traces reach the case paths)
SEEDS: dict[str, dict[str, Any]] = {
    "LLM": {"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "q?",
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "a.",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "t",
            "llm.token_count.prompt": 3, "llm.token_count.completion": 2, "llm.model_name": "m"},
    "TOOL": {"tool.name": "t", "tool_call.id": "c1", "input.value": "{}", "output.value": "r"},
    "RETRIEVER": {"retrieval.documents.0.document.id": "d", "retrieval.documents.0.document.score": 0.5},
    "CHAIN": {"input.value": "q?", "output.value": '{"output": "a."}', "output.mime_type": "application/json"},
    "AGENT": {"input.value": '{"messages": [["user", "q?"]]}', "input.mime_type": "application/json"},
}


@st.composite
def traces(draw: st.DrawFn) -> AssembledTrace:
    count = draw(st.integers(min_value=0, max_value=7))
    ids = [f"{i + 1:016x}" for i in range(count)]
    spans = []
    for i, span_id in enumerate(ids):
        kind = draw(KINDS)
        attrs: dict[str, Any] = dict(SEEDS.get(kind, {})) if draw(st.booleans()) else {}
        attrs.update(draw(attr_maps))
        if draw(st.integers(0, 4)):
            attrs["openinference.span.kind"] = kind
        parent = draw(st.none() | st.sampled_from([*ids, "deadbeefdeadbeef"]))
        start = draw(st.integers(min_value=0, max_value=10**19))
        events = tuple(SpanEvent(draw(st.sampled_from(["exception", "x"])), 0, draw(attr_maps))
                       for _ in range(draw(st.integers(0, 2))))
        spans.append(SpanRecord(TRACE, span_id, parent, f"s{i}", 1, start, draw(st.integers(0, 10**19)), attrs,
                                events, draw(st.integers(0, 2))))
    return AssembledTrace(TRACE, tuple(spans))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_map_never_raises(trace: AssembledTrace) -> None:
    result = MAPPER.map(trace)
    assert isinstance(result, MappingResult)
    assert all(isinstance(n, NotEvaluable) and n.reason for n in result.not_evaluable)
    assert not [n for n in result.not_evaluable if n.reason == "mapper_error"], result.not_evaluable
    assert not [w for w in result.warnings if "unreadable" in w], result.warnings  # a caught exception is a bug
    if MAPPER.matches(trace):
        assert result.cases or result.not_evaluable
    traces_ = [c for c in result.cases if c.scope == "trace"]
    assert len(traces_) <= 1
    llm_spans = sum(1 for s in trace.spans if str(s.attributes.get("openinference.span.kind")).upper() == "LLM")
    calls = [c for c in result.cases if c.scope == "llm_call"]
    if calls:
        assert len(calls) <= llm_spans
    for case in result.cases:
        # a case for every call, whatever it recorded: absent content is None (never a blank or a marker)
        assert case.input is None or (isinstance(case.input, str) and case.input.strip() and
                                      case.input != "__REDACTED__")
        assert case.metadata.get("content_capture") in (None, "full", "partial", "masked", "none")  # router sets it
        assert case.metadata["convention"] in ("openinference", "genai_semconv")
        assert case.trace_id == TRACE
        assert all(isinstance(t, str) for t in case.tags)
        json.dumps(case.to_dict(), default=str)
    routed = MapperRouter([OpenInferenceMapper(), GenAISemconvMapper()]).map(trace)
    assert all(n.reason != "mapper_error" for n in routed.not_evaluable)


@settings(max_examples=300, deadline=None)
@given(attr_maps, st.sampled_from(["llm.input_messages", "llm.output_messages", "retrieval.documents"]))
def test_flattened_readers_are_total(attrs: dict[str, Any], prefix: str) -> None:
    assert all(isinstance(item, dict) for item in indexed(attrs, prefix))
    assert all(m.role for m in messages(attrs, prefix, "user"))


@settings(max_examples=300, deadline=None)
@given(values)
def test_payload_readers_are_total(value: Any) -> None:
    for text in (user_text(value), answer_text(value)):
        assert text is None or (isinstance(text, str) and text.strip())
    assert all(m.role for m in messages_of(value))
    assert all(m.role for m in output_messages_of(value))
