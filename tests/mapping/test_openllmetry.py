"""OpenLLMetryMapper: Traceloop SDK workflows, LangChain/LlamaIndex shapes, legacy quirks, routing, robustness.

The corpus (tests/testdata/corpus) has OpenAI spans only; these traces are built from the shapes the OpenLLMetry
emitters write (standards section 3, instrumentation sources) for what the corpus lacks.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from evald.case import Document, EvalCase, ToolCall
from evald.interfaces import MappingResult
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openllmetry import OpenLLMetryMapper
from evald.mapping.openllmetry_entities import answer_of, question_of, tool_io
from evald.mapping.router import MapperRouter
from evald.model import STATUS_ERROR, AssembledTrace, SpanEvent, SpanRecord
from evald.testing import chat_span, log, span

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = OpenLLMetryMapper()
QUESTION = "What is the refund window for annual plans?"
DOC1 = "Refund policy: annual plans can be refunded in full within 30 days of purchase."
DOC2 = "Monthly plans are non-refundable."


def run(*spans: SpanRecord, logs: tuple[Any, ...] = ()) -> MappingResult:
    return MAPPER.map(AssembledTrace(trace_id=TRACE, spans=spans, logs=logs))


def cases(result: MappingResult, scope: str) -> list[EvalCase]:
    return [c for c in result.cases if c.scope == scope]


def whole(result: MappingResult) -> EvalCase:
    (case,) = cases(result, "trace")
    return case


def entity(kind: str, name: str, span_id: str, parent: str | None = None, inp: Any = None, out: Any = None,
           start: float = 0.0, duration: float = 100.0, **attrs: Any) -> SpanRecord:
    """A Traceloop SDK / framework entity span (``{name}.{kind}``) with JSON-string entity input/output."""
    a: dict[str, Any] = {"traceloop.span.kind": kind, "traceloop.entity.name": name, **attrs}
    if inp is not None:
        a["traceloop.entity.input"] = inp if isinstance(inp, str) else json.dumps(inp)
    if out is not None:
        a["traceloop.entity.output"] = out if isinstance(out, str) else json.dumps(out)
    return span(span_id=span_id, parent=parent, name=f"{name}.{kind}", attributes=a, start_ms=start,
                duration_ms=duration)


def legacy_chat(span_id: str, prompts: list[tuple[str, str]], completion: str | None = None,
                parent: str | None = None, start: float = 10.0, tokens: tuple[int, int] | None = (20, 5),
                **attrs: Any) -> SpanRecord:
    """An OpenLLMetry <= 0.53 chat span (indexed content, ``llm.request.type``, deprecated usage names)."""
    a: dict[str, Any] = {"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                         "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "llm.is_streaming": False}
    for i, (role, content) in enumerate(prompts):
        a[f"gen_ai.prompt.{i}.role"] = role
        a[f"gen_ai.prompt.{i}.content"] = content
    if completion is not None:
        a.update({"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": completion,
                  "gen_ai.completion.0.finish_reason": "stop"})
    if tokens is not None:
        a.update({"gen_ai.usage.prompt_tokens": tokens[0], "gen_ai.usage.completion_tokens": tokens[1],
                  "llm.usage.total_tokens": tokens[0] + tokens[1]})
    a.update(attrs)
    return span(span_id=span_id, parent=parent, name="openai.chat", attributes=a, start_ms=start)


def with_events(record: SpanRecord, *events: tuple[str, dict[str, Any]]) -> SpanRecord:
    return replace(record, events=tuple(SpanEvent(n, 0, a) for n, a in events))


# -- Traceloop SDK workflows ----------------------------------------------------------------------------------


def test_sdk_rag_workflow() -> None:
    root = entity("workflow", "ask", "00000000000000a1", inp={"args": ["RagPipeline", QUESTION], "kwargs": {}},
                  out="Annual plans: 30 days.", **{"traceloop.workflow.name": "ask",
                                                   "traceloop.association.properties.session_id": "s-1",
                                                   "traceloop.association.properties.user_id": "u-9"})
    retrieve = entity("task", "retrieve", "00000000000000a2", "00000000000000a1", start=1,
                      inp={"args": [QUESTION], "kwargs": {"k": 2}},
                      out=[{"id": "kb-001", "text": DOC1, "score": 0.72}, {"id": "kb-002", "text": DOC2,
                                                                          "score": 0.3}])
    chroma = with_events(span(span_id="00000000000000a3", parent="00000000000000a2", name="chroma.query",
                              attributes={"db.system": "chroma", "db.operation": "query"}, start_ms=2),
                         ("db.query.result", {"db.query.result.id": "kb-001", "db.query.result.distance": 0.28,
                                              "db.query.result.document": DOC1,
                                              "db.query.result.metadata": '{"source": "refunds.md"}'}),
                         ("db.query.result", {"db.query.result.id": "kb-002", "db.query.result.distance": 0.7,
                                              "db.query.result.document": DOC2}))
    embed = span(span_id="00000000000000a4", parent="00000000000000a2", name="openai.embeddings", start_ms=1.5,
                 attributes={"llm.request.type": "embedding", "gen_ai.prompt.0.content": QUESTION,
                             "gen_ai.usage.prompt_tokens": 9})
    prompt = f"Context:\n[kb-001] {DOC1}\n[kb-002] {DOC2}\n\nQuestion: {QUESTION}"
    chat = legacy_chat("00000000000000a5", [("system", "Use the context."), ("user", prompt)],
                       "Annual plans can be refunded within 30 days.", parent="00000000000000a1", start=5,
                       tokens=(75, 20), **{"traceloop.workflow.name": "ask"})
    result = run(root, retrieve, chroma, embed, chat)
    assert not result.not_evaluable and not result.warnings
    case = whole(result)
    assert (case.input, case.output) == (QUESTION, "Annual plans: 30 days.")
    assert [(d.id, d.content, d.score) for d in case.context] == [("kb-001", DOC1, 0.72), ("kb-002", DOC2, 0.3)]
    assert case.context[0].metadata == {"source": "refunds.md", "distance": 0.28}
    assert (case.input_tokens, case.output_tokens, case.token_count) == (75, 20, 95)  # embeddings are not a call
    assert (case.span_id, case.latency_ms, case.system_prompt) == ("00000000000000a1", 100.0, "Use the context.")
    assert case.metadata == {"convention": "openllmetry", "llm_call_count": 1, "workflow_name": "ask",
                             "session_id": "s-1", "user_id": "u-9",
                             "association_properties": {"session_id": "s-1", "user_id": "u-9"},
                             "span_end_unix_nano": root.end_time_unix_nano}
    (call,) = cases(result, "llm_call")
    assert (call.input, call.output, call.span_id) == (prompt, "Annual plans can be refunded within 30 days.",
                                                       "00000000000000a5")
    assert call.metadata["workflow_name"] == "ask" and call.metadata["finish_reasons"] == ["stop"]


def test_rag_question_from_the_embedded_query_in_the_same_trace() -> None:
    embed = span(span_id="00000000000000b1", name="openai.embeddings", attributes={
        "gen_ai.operation.name": "embeddings", "gen_ai.is_streaming": False,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}])})
    prompt = f"Context:\n{DOC1}\n\nQuestion: {QUESTION}"
    chat = legacy_chat("00000000000000b2", [("user", prompt)], "30 days.", start=20)
    case = whole(run(embed, chat))
    assert case.input == QUESTION
    assert cases(run(chat), "trace")[0].input == prompt  # without the query, only the message sent is known


def test_agent_with_tool_span_merges_by_name() -> None:
    agent = entity("agent", "weather_agent", "00000000000000c1", duration=500,
                   inp={"args": [], "kwargs": {"question": "What's the weather in Paris?"}},
                   out=json.dumps("It is 18\u00b0C in Paris."))
    first = legacy_chat("00000000000000c2", [("user", "What's the weather in Paris?")], parent="00000000000000c1",
                        start=10, tokens=(50, 10), **{
                            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
                            "gen_ai.completion.0.tool_calls.0.id": "call_1",
                            "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}'})
    tool = entity("tool", "get_weather", "00000000000000c3", "00000000000000c1", start=100,
                  inp={"args": [], "kwargs": {"city": "Paris"}}, out={"temperature_c": 18})
    second = legacy_chat("00000000000000c4", [("user", "What's the weather in Paris?")], "It is 18°C in Paris.",
                         parent="00000000000000c1", start=200, tokens=(80, 12), **{
                             "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.id": "call_1",
                             "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
                             "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Paris"}',
                             "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": '{"temperature_c": 18}',
                             "gen_ai.prompt.2.tool_call_id": "call_1"})
    result = run(agent, first, tool, second)
    case = whole(result)
    expected = ToolCall("get_weather", {"city": "Paris"}, {"temperature_c": 18}, "call_1")
    assert case.tool_calls == (expected,)
    assert (case.input, case.output) == ("What's the weather in Paris?", "It is 18°C in Paris.")
    assert (case.input_tokens, case.output_tokens, case.latency_ms) == (130, 22, 500.0)
    assert case.metadata["agent_name"] == "weather_agent"
    llm1, llm2 = cases(result, "llm_call")
    assert llm1.output is None and llm1.tool_calls == (expected,) and llm1.metadata["finish_reasons"] == ["tool_call"]
    assert llm2.metadata["agent_name"] == "weather_agent"


def test_tool_spans_without_requested_calls() -> None:
    chat = legacy_chat("00000000000000d1", [("user", "Look up Paris and Rome")], "Done.")
    ok = entity("tool", "lookup", "00000000000000d2", start=20, inp={"args": ["Paris"], "kwargs": {}},
                out="Paris is the capital of France.")
    failed = replace(entity("tool", "lookup", "00000000000000d3", start=30, inp={"args": ["Rome"], "kwargs": {}}),
                     status_code=STATUS_ERROR)
    case = whole(run(chat, ok, failed))
    assert case.tool_calls == (ToolCall("lookup", "Paris", "Paris is the capital of France."),
                               ToolCall("lookup", "Rome", None, None, error=True))
    assert case.error is False  # a failed tool is not a failed LLM call


def test_genai_tool_attributes_win_over_entity_data() -> None:
    tool = entity("tool", "calc", "00000000000000d4", start=20, inp={"args": [1, 2], "kwargs": {}}, out="3", **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "t1",
        "gen_ai.tool.call.arguments": '{"a": 1, "b": 2}', "gen_ai.tool.call.result": "3"})
    chat = legacy_chat("00000000000000d5", [("user", "1+2?")], "3")
    assert whole(run(chat, tool)).tool_calls == (ToolCall("add", {"a": 1, "b": 2}, "3", "t1"),)


# -- LangChain / LangGraph / LlamaIndex shapes ------------------------------------------------------------------


def lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_langchain_chain_wrapping_the_provider_span_counts_the_call_once() -> None:
    chain = entity("workflow", "RunnableSequence", "00000000000000e1", duration=300,
                   inp={"inputs": {"question": "Capital of France?"}, "tags": [], "metadata": {},
                        "kwargs": {"name": "RunnableSequence"}},
                   out={"outputs": "Paris is the capital.", "kwargs": {"tags": []}},
                   **{"traceloop.workflow.name": "RunnableSequence"})
    outer = legacy_chat("00000000000000e2", [("user", "Capital of France?")], "Paris is the capital.",
                        parent="00000000000000e1", start=5, tokens=(20, 5), **{"gen_ai.response.model": None})
    inner = legacy_chat("00000000000000e3", [], None, parent="00000000000000e2", start=6, tokens=(20, 5))
    result = run(chain, outer, inner)
    (call,) = cases(result, "llm_call")
    assert call.span_id == "00000000000000e3"  # the provider span, completed by the wrapper's content
    assert (call.input, call.output, call.model) == ("Capital of France?", "Paris is the capital.",
                                                     "gpt-4o-mini-2024-07-18")
    case = whole(result)
    assert (case.input_tokens, case.output_tokens, case.token_count) == (20, 5, 25)
    assert (case.input, case.output) == ("Capital of France?", "Paris is the capital.")
    assert case.metadata["workflow_name"] == "RunnableSequence" and case.metadata["llm_call_count"] == 1


def test_wrapper_around_several_calls_does_not_lend_its_usage() -> None:
    outer = legacy_chat("00000000000000e4", [("user", "Hi there")], "Hello!", tokens=(100, 100))
    inner1 = legacy_chat("00000000000000e5", [("user", "Hi there")], "Hel", parent="00000000000000e4", start=11,
                         tokens=(10, 1))
    inner2 = legacy_chat("00000000000000e6", [("user", "Hi there")], "Hello!", parent="00000000000000e4", start=12,
                         tokens=(10, 2))
    case = whole(run(outer, inner1, inner2))
    assert (case.input_tokens, case.output_tokens, case.output) == (20, 3, "Hello!")


def test_langchain_tool_message_output_completes_the_requested_call() -> None:
    chat = legacy_chat("00000000000000f1", [("user", "Weather in Paris?")], start=0, **{
        "gen_ai.completion.0.tool_calls.0.id": "call_9", "gen_ai.completion.0.tool_calls.0.name": "get_weather",
        "gen_ai.completion.0.tool_calls.0.arguments": {"city": "Paris"}})  # a kvlist AnyValue, not JSON
    tool = entity("tool", "get_weather", "00000000000000f2", start=20,
                  inp={"input_str": "{'city': 'Paris'}", "tags": [], "metadata": {}, "inputs": {"city": "Paris"},
                       "kwargs": {"tool_call_id": "call_9"}},
                  out={"output": lc("ToolMessage", content="18 degrees", tool_call_id="call_9", name="get_weather"),
                       "kwargs": {}})
    final = legacy_chat("00000000000000f3", [("user", "Weather in Paris?")], "18 degrees in Paris.", start=40)
    case = whole(run(chat, tool, final))
    assert case.tool_calls == (ToolCall("get_weather", {"city": "Paris"}, "18 degrees", "call_9"),)


def test_langchain_wrappers_copied_into_genai_tool_attributes_are_unwrapped() -> None:
    # OpenLLMetry 0.62 (LangChain) writes the callback's input/output into gen_ai.tool.call.* as well
    wrapped_in = json.dumps({"input_str": "{'city': 'Paris'}", "tags": [], "metadata": {}, "inputs": {"city": "Paris"},
                             "kwargs": {"color": "green", "name": None, "tool_call_id": "call_9"}})
    wrapped_out = json.dumps({"output": lc("ToolMessage", content='{"temperature_c": 18}', tool_call_id="call_9",
                                           name="get_weather"), "kwargs": {"tags": []}})
    tool = entity("tool", "get_weather", "00000000000000f4", start=20, inp=wrapped_in, out=wrapped_out, **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.arguments": wrapped_in, "gen_ai.tool.call.result": wrapped_out})
    final = legacy_chat("00000000000000f5", [("user", "Weather in Paris?")], "18 degrees in Paris.", start=40)
    case = whole(run(tool, final))
    assert case.tool_calls == (ToolCall("get_weather", {"city": "Paris"}, {"temperature_c": 18}, "call_9"),)


def test_documents_fed_to_a_step_by_an_untraced_retriever() -> None:
    # OpenLLMetry 0.47 (LangChain) has no retriever callbacks: the documents first appear as the next step's input
    def document(doc_id: str, text: str, score: float) -> dict[str, Any]:
        return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
                "kwargs": {"id": doc_id, "page_content": text, "metadata": {"source": "kb", "score": score},
                           "type": "Document"}}
    fmt = entity("task", "fmt", "00000000000000f6", start=5,
                 inp={"inputs": [document("kb-1", DOC1, 0.72), document("kb-2", DOC2, 0.30)], "tags": [],
                      "metadata": {}, "kwargs": {"name": "fmt"}},
                 out={"outputs": f"[kb-1] {DOC1}\n[kb-2] {DOC2}", "kwargs": {}})
    chat = legacy_chat("00000000000000f7", [("user", QUESTION)], "Within 30 days.", start=10)
    assert [(d.id, d.content, d.score) for d in whole(run(fmt, chat)).context] == [
        ("kb-1", DOC1, 0.72), ("kb-2", DOC2, 0.30)]
    plain = entity("task", "fmt", "00000000000000f6", start=5, inp={"inputs": [{"page_content": DOC1}], "tags": []})
    assert whole(run(plain, chat)).context == ()  # only LangChain Document objects count as documents there


def test_documents_in_a_pipeline_output_per_component() -> None:
    # OpenLLMetry Haystack: the workflow's output holds each component's outputs, the retriever's documents among them
    docs = [{"id": "kb-1", "content": DOC1, "meta": {"source": "a"}, "score": 5.2, "embedding": None},
            {"id": "kb-2", "content": DOC2, "meta": {}, "score": 4.1, "embedding": None}]
    pipeline = entity("workflow", "haystack_pipeline", "00000000000000f8", duration=200,
                      inp={"args": [], "kwargs": {"retriever": {"query": QUESTION}, "prompt_builder": {
                          "question": QUESTION}}},
                      out={"retriever": {"documents": docs}, "llm": {"replies": [
                          {"_role": "assistant", "_content": [{"text": "Within 30 days."}]}]}})
    chat = legacy_chat("00000000000000f9", [("user", QUESTION)], "Within 30 days.", parent="00000000000000f8",
                       start=10)
    case = whole(run(pipeline, chat))
    assert [(d.id, d.content, d.score) for d in case.context] == [("kb-1", DOC1, 5.2), ("kb-2", DOC2, 4.1)]


def test_langgraph_messages_state() -> None:
    graph = entity("workflow", "LangGraph", "00000000000000f4",
                   inp={"inputs": {"messages": [["user", "What is 2 + 2?"]]}, "tags": [], "metadata": {}},
                   out={"outputs": {"messages": [lc("HumanMessage", content="What is 2 + 2?", type="human"),
                                                 lc("AIMessage", content="2 + 2 is 4.", type="ai")]}})
    chat = legacy_chat("00000000000000f5", [("user", "What is 2 + 2?")], "2 + 2 is 4", parent="00000000000000f4")
    case = whole(run(graph, chat))
    assert (case.input, case.output) == ("What is 2 + 2?", "2 + 2 is 4.")
    assert case.context == ()  # chat messages are not documents


def test_langchain_documents_and_llamaindex_nodes_become_context() -> None:
    docs = entity("task", "VectorStoreRetriever", "0000000000000101", start=1, out={"outputs": [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "document", "Document"],
         "kwargs": {"page_content": DOC1, "metadata": {"id": "kb-001"}, "type": "Document"}}]})
    nodes = entity("task", "retrieve", "0000000000000102", start=2, out=[
        {"node": {"id_": "kb-002", "text": DOC2, "metadata": {}}, "score": 0.3, "class_name": "NodeWithScore"}])
    chat = legacy_chat("0000000000000103", [("user", QUESTION)], "30 days.", start=5)
    case = whole(run(docs, nodes, chat))
    assert [(d.id, d.content, d.score) for d in case.context] == [("kb-001", DOC1, None), ("kb-002", DOC2, 0.3)]


def test_vector_db_result_shapes() -> None:
    search = with_events(span(span_id="0000000000000111", name="milvus.search", attributes={"db.system": "milvus"}),
                         ("db.search.result", {"db.search.result.id": 7, "db.search.result.score": 0.9,
                                               "db.search.result.entity": json.dumps({"text": DOC1})}))
    legacy = with_events(span(span_id="0000000000000112", name="chroma.query", start_ms=1,
                              attributes={"db.system": "chroma"}),
                         ("vector_db.query.result", {"vector_db.query.result.0.ids": ["a", "b"],
                                                     "vector_db.query.result.0.documents": [DOC2, "B text"],
                                                     "vector_db.query.result.0.distances": [0.1, 0.2]}))
    pinecone = with_events(span(span_id="0000000000000113", name="pinecone.query", start_ms=2),
                           ("db.pinecone.query.result", {"db.pinecone.query.result.id": "p1",
                                                         "db.pinecone.query.result.score": 0.5}))
    chat = legacy_chat("0000000000000114", [("user", QUESTION)], "30 days.", start=5)
    case = whole(run(search, legacy, pinecone, chat))
    assert [(d.id, d.content, d.score) for d in case.context] == [
        ("7", DOC1, 0.9), ("a", DOC2, None), ("b", "B text", None), ("p1", None, 0.5)]
    assert case.context[1].metadata == {"distance": 0.1}


def test_genai_retrieval_documents_attribute() -> None:
    retrieval = span(span_id="0000000000000121", name="retrieval kb", attributes={
        "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": [{"id": "kb-1", "score": 0.5}]})
    chat = legacy_chat("0000000000000122", [("user", QUESTION)], "30 days.")
    assert whole(run(retrieval, chat)).context == (Document(id="kb-1", score=0.5),)


# -- legacy quirks and value shapes -----------------------------------------------------------------------------


def test_completion_style_prompt_and_unindexed_completion() -> None:
    completion = span(span_id="0000000000000131", name="openai.completion", attributes={
        "llm.request.type": "completion", "gen_ai.system": "OpenAI", "gen_ai.request.model": "davinci-002",
        "gen_ai.prompt.0.user": "Tell me a joke about OpenTelemetry", "gen_ai.completion.0.content": "A span walks",
        "llm.usage.total_tokens": 12, "gen_ai.usage.prompt_tokens": 7})
    (call,) = cases(run(completion), "llm_call")
    assert (call.input, call.output, call.metadata["operation"]) == (
        "Tell me a joke about OpenTelemetry", "A span walks", "text_completion")
    assert (call.input_tokens, call.output_tokens, call.token_count) == (7, 5, 12)  # output derived from the total
    assert (call.provider, call.model) == ("openai", "davinci-002")
    llamaindex = span(span_id="0000000000000132", name="OpenAI.task", attributes={
        "traceloop.span.kind": "task", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi",
        "gen_ai.completion.role": "assistant", "gen_ai.completion.content": "Hello", "llm.usage.total_tokens": 9})
    (call,) = cases(run(llamaindex), "llm_call")
    assert (call.input, call.output, call.metadata["operation"]) == ("Hi", "Hello", "chat")
    assert (call.input_tokens, call.output_tokens, call.token_count) == (None, None, 9)  # a total alone is kept


def test_legacy_function_call_and_system_prompt_field() -> None:
    chat = span(span_id="0000000000000141", name="openai.chat", attributes={
        "llm.request.type": "chat", "gen_ai.prompt.0.system": "Be terse.", "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Weather?", "gen_ai.completion.0.function_call.name": "get_weather",
        "gen_ai.completion.0.function_call.arguments": '{"city": "Oslo"}',
        "gen_ai.completion.0.finish_reason": "function_call"})
    (call,) = cases(run(chat), "llm_call")
    assert call.tool_calls == (ToolCall("get_weather", {"city": "Oslo"}),)
    assert (call.system_prompt, call.metadata["finish_reasons"]) == ("Be terse.", ["tool_call"])


def test_structured_anyvalues_instead_of_json_strings() -> None:
    chat = span(span_id="0000000000000151", name="openai.chat", attributes={
        "gen_ai.operation.name": "chat", "gen_ai.is_streaming": True, "gen_ai.usage.total_tokens": 8,
        "gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 3,
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "Caf\\u00e9?"}]}],
        "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "Oui."}],
                                    "finish_reason": "stop"}]})
    flow = span(span_id="0000000000000152", name="w.workflow", attributes={
        "traceloop.span.kind": "workflow", "traceloop.entity.input": {"args": [], "kwargs": {"query": "Café?"}},
        "traceloop.entity.output": {"answer": "Oui.", "sources": 2}})
    result = run(replace(chat, parent_span_id=flow.span_id), flow)
    (call,) = cases(result, "llm_call")
    assert (call.input, call.token_count, call.metadata["streaming"]) == ("Café?", 8, True)  # total never added
    assert (whole(result).input, whole(result).output) == ("Café?", "Oui.")


def test_message_content_on_log_records() -> None:
    chat = span(span_id="0000000000000161", name="openai.chat", attributes={
        "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.usage.input_tokens": 4,
        "gen_ai.usage.output_tokens": 2})
    logs = (log(TRACE, chat.span_id, "gen_ai.user.message", body={"content": "Ping?"}),
            log(TRACE, chat.span_id, "gen_ai.choice",
                body={"index": 0, "finish_reason": "stop", "message": {"content": "Pong."}}))
    case = whole(run(chat, logs=logs))
    assert (case.input, case.output, case.input_tokens) == ("Ping?", "Pong.", 4)


def test_error_without_output_stays_evaluable() -> None:
    failed = with_events(replace(legacy_chat("0000000000000171", [("user", "Order status?")], tokens=None,
                                             **{"gen_ai.response.model": None}), status_code=STATUS_ERROR),
                         ("exception", {"exception.type": "'openai.InternalServerError'"}))
    result = run(failed)
    (call,) = cases(result, "llm_call")
    assert (call.error, call.output, call.metadata["error_type"]) == (True, None, "openai.InternalServerError")
    assert (whole(result).error, whole(result).model, whole(result).request_model) == (True, None, "gpt-4o-mini")


def test_not_evaluable_reasons() -> None:
    embed = span(name="openai.embeddings", attributes={"llm.request.type": "embedding",
                                                       "gen_ai.prompt.0.content": "x"})
    result = run(embed)
    assert not result.cases and [(n.reason, n.scope) for n in result.not_evaluable] == [
        ("no_inference_span", "trace")]
    no_content = legacy_chat("0000000000000181", [], None)
    result = run(no_content)  # TRACELOOP_TRACE_CONTENT=false: still cases, scored on what was recorded
    assert not result.not_evaluable
    assert [(c.scope, c.input, c.output) for c in result.cases] == [("llm_call", None, None), ("trace", None, None)]
    workflow_only = entity("workflow", "w", "0000000000000182", inp={"args": ["hello there"]}, out="bye now")
    assert [n.reason for n in run(workflow_only).not_evaluable] == ["no_inference_span"]


# -- entity payload decoding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("payload", "expected"), [
    ({"args": ["MyAgent", "How do refunds work?"], "kwargs": {}}, "How do refunds work?"),  # self skipped
    ({"args": [], "kwargs": {"user_id": "u1", "question": "Why?"}}, "Why?"),
    ({"args": [{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "Hi you"}]}]},
     "Hi you"),
    ({"inputs": {"input": "Plan a trip"}, "tags": [], "metadata": {}, "kwargs": {"name": "AgentExecutor"}},
     "Plan a trip"),
    ({"str_or_query_bundle": "What did the author do?"}, "What did the author do?"),
    ({"args": ["Paris"], "kwargs": {}}, None),  # a bare identifier is not a question
    (json.dumps(json.dumps({"args": [], "kwargs": {"query": "double encoded?"}})), "double encoded?"),
    ("not json at all", "not json at all"),
    ({"args": [], "kwargs": {"city": "Paris", "unit": "C"}}, None),
    ({"args": [], "kwargs": {"prompt_builder": {"question": "Refund window?"}}}, "Refund window?"),  # Haystack
])
def test_question_of(payload: Any, expected: str | None) -> None:
    assert question_of(payload if isinstance(payload, str) else json.dumps(payload)) == expected


@pytest.mark.parametrize(("payload", "expected"), [
    ("The answer.", "The answer."),
    ({"outputs": {"answer": "Yes.", "source_documents": []}, "kwargs": {}}, "Yes."),
    ({"outputs": "Paris", "kwargs": {"tags": []}}, "Paris"),
    ({"response": "Grounded.", "source_nodes": [], "metadata": {}}, "Grounded."),
    ({"choices": [{"message": {"role": "assistant", "content": "From a completion."}}]}, "From a completion."),
    (lc("AIMessage", content=[{"type": "text", "text": "Part one."}]), "Part one."),
    ({"score": 3, "label": "x"}, None),
    ({"llm": {"replies": [{"_role": "assistant", "_content": [{"text": "From Haystack."}], "_meta": {}}]}},
     "From Haystack."),
    ([0.1, 0.2], None),
    (42, None),
])
def test_answer_of(payload: Any, expected: str | None) -> None:
    assert answer_of(json.dumps(payload)) == expected


def test_tool_io_shapes() -> None:
    assert tool_io(json.dumps({"args": ["Svc", "Paris"], "kwargs": {}}), None) == (["Svc", "Paris"], None, None)
    assert tool_io(json.dumps({"args": [], "kwargs": {"city": "Paris"}}), '"sunny"') == (
        {"city": "Paris"}, "sunny", None)
    assert tool_io(json.dumps({"args": ["Paris"], "kwargs": {"unit": "C"}}), "18") == (
        {"args": ["Paris"], "kwargs": {"unit": "C"}}, "18", None)
    assert tool_io(None, json.dumps({"output": "[1, 2]", "kwargs": {}})) == (None, [1, 2], None)
    assert tool_io("garbage{", "{not json") == ("garbage{", "{not json", None)


# -- routing ---------------------------------------------------------------------------------------------------


def test_matches_keys_on_openllmetry_only_attributes() -> None:
    def claims(attrs: dict[str, Any]) -> bool:
        return MAPPER.matches(AssembledTrace(TRACE, (span(attributes=attrs),)))

    assert claims({"traceloop.span.kind": "workflow"})
    assert claims({"traceloop.association.properties.user_id": "u"})
    assert claims({"llm.request.type": "chat"})
    assert claims({"gen_ai.prompt.0.content": "x"})
    assert claims({"gen_ai.completion.0.content": "x"})
    assert claims({"gen_ai.is_streaming": False, "gen_ai.operation.name": "chat"})  # 0.54+ rename of llm.*
    assert not claims({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3})
    assert not claims({"gen_ai.prompt": "[]", "gen_ai.system": "openai"})
    assert not MAPPER.matches(AssembledTrace(TRACE, ()))


def test_router_order_with_genai_semconv() -> None:
    router = MapperRouter([OpenLLMetryMapper(), GenAISemconvMapper()])
    ours = router.map(AssembledTrace(TRACE, (legacy_chat("0000000000000191", [("user", "Hi you")], "Hello"),)))
    theirs = router.map(AssembledTrace(TRACE, (chat_span(),)))
    assert {c.metadata["convention"] for c in ours.cases} == {"openllmetry"}
    assert {c.metadata["convention"] for c in theirs.cases} == {"genai_semconv"}


def test_anthropic_style_legacy_content_blocks() -> None:
    first = span(span_id="00000000000001a1", name="anthropic.chat", start_ms=0, attributes={
        "llm.request.type": "chat", "gen_ai.system": "Anthropic", "gen_ai.request.model": "claude-3-5-haiku",
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": json.dumps([{"type": "text", "text": "Weather?"}]),
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_use",
        "gen_ai.completion.0.tool_calls.0.id": "toolu_1", "gen_ai.completion.0.tool_calls.0.name": "weather",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Oslo"}',
        "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 8})
    second = span(span_id="00000000000001a2", name="anthropic.chat", start_ms=50, attributes={
        "llm.request.type": "chat", "gen_ai.system": "Anthropic", "gen_ai.request.model": "claude-3-5-haiku",
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Weather?",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": json.dumps(
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "-2C"}]),
        "gen_ai.completion.0.content": "It is -2C in Oslo.", "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.output_tokens": 9})
    case = whole(run(first, second))
    assert case.tool_calls == (ToolCall("weather", {"city": "Oslo"}, "-2C", "toolu_1"),)
    assert (case.input, case.output, case.provider) == ("Weather?", "It is -2C in Oslo.", "anthropic")
    assert (case.input_tokens, case.output_tokens) == (70, 17)


def test_first_release_llm_names() -> None:
    early = span(span_id="00000000000001b1", name="openai.chat", attributes={
        "llm.request.type": "chat", "llm.vendor": "OpenAI", "llm.request.model": "gpt-3.5-turbo",
        "llm.response.model": "gpt-3.5-turbo-0125", "llm.prompts.0.role": "user", "llm.prompts.0.content": "Hello?",
        "llm.completions.0.role": "assistant", "llm.completions.0.content": "Hi!", "llm.usage.prompt_tokens": 3,
        "llm.usage.completion_tokens": 2, "llm.usage.total_tokens": 5})
    (call,) = cases(run(early), "llm_call")
    assert (call.input, call.output, call.model, call.request_model, call.provider) == (
        "Hello?", "Hi!", "gpt-3.5-turbo-0125", "gpt-3.5-turbo", "openai")
    assert (call.input_tokens, call.output_tokens, call.token_count) == (3, 2, 5)


def test_same_response_traced_twice_counts_once() -> None:
    a = legacy_chat("00000000000001c1", [("user", "Hi there")], "Hello!", tokens=(5, 2),
                    **{"gen_ai.response.id": "chatcmpl-1"})
    b = legacy_chat("00000000000001c2", [("user", "Hi there")], "Hello!", tokens=(5, 2), start=11,
                    **{"gen_ai.response.id": "chatcmpl-1"})
    result = run(a, b)
    assert [c.span_id for c in cases(result, "llm_call")] == ["00000000000001c1"]
    assert (whole(result).input_tokens, whole(result).output_tokens) == (5, 2)


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"traceloop.span.kind": "workflow"}, True),
        ({"gen_ai.prompt.0.content": "hi", "gen_ai.system": "openai"}, True),
        ({"llm.request.type": "chat"}, True),
        ({"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[]"}, False),
        ({7: "not a str key", b"traceloop.x": 1, "traceloop.entity.name": "t"}, True),  # odd keys: careful pass
        ({7: "not a str key", b"traceloop.x": 1}, False),
    ],
)
def test_openllmetry_marker_check(attributes: dict[Any, Any], expected: bool) -> None:
    from evald.mapping.openllmetry_attrs import is_openllmetry_span

    assert is_openllmetry_span(span(attributes=attributes)) is expected
