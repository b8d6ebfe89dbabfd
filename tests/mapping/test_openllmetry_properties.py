"""Property tests: OpenLLMetryMapper and its decoders never raise, whatever the attributes, payloads or span tree."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openllmetry import OpenLLMetryMapper
from evald.mapping.openllmetry_entities import answer_of, question_of, tool_io
from evald.mapping.openllmetry_retrieval import entity_documents, result_documents
from evald.mapping.router import MapperRouter
from evald.model import AssembledTrace, SpanEvent, SpanRecord
from evald.testing import log

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = OpenLLMetryMapper()
ROUTER = MapperRouter([OpenLLMetryMapper(), GenAISemconvMapper()])

KEYS = [
    "traceloop.span.kind", "traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output",
    "traceloop.workflow.name", "traceloop.association.properties.session_id", "traceloop.prompt.key",
    "llm.request.type", "llm.is_streaming", "gen_ai.is_streaming", "llm.usage.total_tokens",
    "gen_ai.usage.total_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.system", "gen_ai.provider.name",
    "gen_ai.request.model", "gen_ai.response.model", "gen_ai.operation.name", "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content", "gen_ai.prompt.0.user", "gen_ai.prompt.1.role", "gen_ai.prompt.1.content",
    "gen_ai.prompt.1.tool_call_id", "gen_ai.prompt.1.tool_calls.0.id", "gen_ai.prompt.1.tool_calls.0.name",
    "gen_ai.prompt.1.tool_calls.0.arguments", "gen_ai.completion.0.content", "gen_ai.completion.0.role",
    "gen_ai.completion.0.finish_reason", "gen_ai.completion.0.tool_calls.0.id",
    "gen_ai.completion.0.tool_calls.0.name", "gen_ai.completion.0.tool_calls.0.arguments",
    "gen_ai.completion.0.function_call.name", "gen_ai.completion.content", "gen_ai.completion.role",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.response.finish_reasons", "llm.response.finish_reason",
    "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
    "tool.name", "tool.arguments", "gen_ai.retrieval.documents", "gen_ai.retrieval.query.text", "db.query.text",
    "db.query.result.document", "db.query.result.id", "error.type", "gen_ai.agent.name",
]
WORDS = ["workflow", "task", "agent", "tool", "unknown", "chat", "completion", "embedding", "rerank", "execute_tool",
         "invoke_agent", "user", "assistant", "tool_calls", "stop", ""]
PAYLOAD_KEYS = ["args", "kwargs", "inputs", "outputs", "output", "input_str", "lc", "type", "id", "messages", "role",
                "content", "page_content", "node", "score", "question", "answer", "text", "choices", "message",
                "tool_call_id", "metadata", "id_", "__lc__"]
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.binary(max_size=8)
json_like = st.recursive(scalars | st.sampled_from(WORDS), lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.sampled_from(PAYLOAD_KEYS), inner, max_size=4), max_leaves=15)
soup = st.text(alphabet="[]{}'\":,rolecntxargs \\", max_size=40)
values = json_like | st.builds(lambda v: json.dumps(v, default=repr), json_like) | soup
attr_maps = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), values, max_size=8)
EVENTS = st.sampled_from(["db.query.result", "db.search.result", "vector_db.query.result", "exception",
                          "gen_ai.choice", "x"])
event_attrs = st.dictionaries(st.sampled_from(["db.query.result.id", "db.query.result.score",
                                               "db.query.result.document", "db.query.result.metadata",
                                               "db.query.result.distance", "db.search.result.entity",
                                               "vector_db.query.result.0.ids", "vector_db.query.result.0.documents",
                                               "exception.type", "x"]), values, max_size=5)


@st.composite
def traces(draw: st.DrawFn) -> AssembledTrace:
    count = draw(st.integers(min_value=0, max_value=6))
    ids = [f"{i + 1:016x}" for i in range(count)]
    spans = []
    for i, span_id in enumerate(ids):
        attrs = draw(attr_maps)
        if draw(st.booleans()):
            attrs["traceloop.span.kind"] = draw(st.sampled_from(WORDS))
        if draw(st.booleans()):
            attrs["llm.request.type"] = draw(st.sampled_from(WORDS))
        parent = draw(st.none() | st.sampled_from([*ids, "deadbeefdeadbeef"]))
        events = tuple(SpanEvent(draw(EVENTS), 0, draw(event_attrs)) for _ in range(draw(st.integers(0, 2))))
        spans.append(SpanRecord(TRACE, span_id, parent, f"s{i}", 1, draw(st.integers(0, 10**19)),
                                draw(st.integers(0, 10**19)), attrs, events, draw(st.integers(0, 2))))
    logs = tuple(log(TRACE, draw(st.none() | st.sampled_from(ids or ["x"])),
                     draw(st.sampled_from(["gen_ai.user.message", "gen_ai.choice", ""])), draw(attr_maps),
                     body=draw(json_like)) for _ in range(draw(st.integers(0, 3))))
    return AssembledTrace(TRACE, tuple(spans), logs)


def check(result: MappingResult, matched: bool) -> None:
    assert isinstance(result, MappingResult)
    assert all(isinstance(n, NotEvaluable) for n in result.not_evaluable)
    if matched:
        assert result.cases or result.not_evaluable
    assert len([c for c in result.cases if c.scope == "trace"]) <= 1
    assert not [w for w in result.warnings if "unreadable" in w], result.warnings  # a caught exception is a bug
    assert all(n.reason != "mapper_error" for n in result.not_evaluable)
    for case in result.cases:
        assert case.metadata["convention"] == "openllmetry"
        # a case for every call, whatever it recorded: absent content is None, never a blank string
        assert case.input is None or (isinstance(case.input, str) and case.input.strip())
        assert case.output is None or (isinstance(case.output, str) and case.output.strip())
        for count in (case.input_tokens, case.output_tokens, case.token_count):
            assert count is None or count >= 0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_map_never_raises(trace: AssembledTrace) -> None:
    check(MAPPER.map(trace), MAPPER.matches(trace))
    routed = ROUTER.map(trace)
    assert all(n.reason != "mapper_error" for n in routed.not_evaluable)


@settings(max_examples=300, deadline=None)
@given(json_like | values)
def test_entity_decoders_are_total(payload: Any) -> None:
    for found in (question_of(payload), answer_of(payload)):
        assert found is None or (isinstance(found, str) and found.strip())
    args, _, call_id = tool_io(payload, payload)
    assert call_id is None or isinstance(call_id, str)
    assert all(d.content is None or isinstance(d.content, str) for d in entity_documents(payload))


@settings(max_examples=200, deadline=None)
@given(event_attrs)
def test_result_events_are_total(attrs: dict[str, Any]) -> None:
    for doc in result_documents(attrs):
        assert doc.id is not None or doc.content is not None or doc.score is not None


@st.composite
def llm_trees(draw: st.DrawFn) -> tuple[AssembledTrace, int, int]:
    """Legacy chat spans nested at random (framework spans wrapping provider spans), each with usage."""
    count = draw(st.integers(min_value=1, max_value=6))
    ids = [f"{i + 1:016x}" for i in range(count)]
    parents = [None] + [draw(st.none() | st.sampled_from(ids[:i])) for i in range(1, count)]
    usage = [(draw(st.integers(0, 1000)), draw(st.integers(0, 1000))) for _ in ids]
    spans = tuple(SpanRecord(TRACE, sid, parent, "openai.chat", 3, 10 + i, 100 + i, {
        "llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": f"question {i}",
        "gen_ai.completion.0.content": f"answer {i}", "gen_ai.usage.prompt_tokens": tin,
        "gen_ai.usage.completion_tokens": tout, "llm.usage.total_tokens": tin + tout})
        for i, (sid, parent, (tin, tout)) in enumerate(zip(ids, parents, usage, strict=True)))
    wrappers = {p for p in parents if p is not None}
    leaves = [u for sid, u in zip(ids, usage, strict=True) if sid not in wrappers]
    return AssembledTrace(TRACE, spans), sum(u[0] for u in leaves), sum(u[1] for u in leaves)


@settings(max_examples=150, deadline=None)
@given(llm_trees())
def test_nested_llm_spans_count_each_request_once(tree: tuple[AssembledTrace, int, int]) -> None:
    trace, tin, tout = tree
    result = MAPPER.map(trace)
    (case,) = [c for c in result.cases if c.scope == "trace"]
    calls = [c for c in result.cases if c.scope == "llm_call"]
    assert (case.input_tokens, case.output_tokens, case.token_count) == (tin, tout, tin + tout)
    assert sum(c.input_tokens or 0 for c in calls) == tin
