"""Ground truth: the OpenLLMetry corpus (0.62 JSON-message generation and 0.47 indexed generation) maps right.

Routing is ``[OpenLLMetryMapper(), GenAISemconvMapper()]`` (the OpenInference mapper, first in production, never
matches these files). Expected values come from manifest.json; nothing is special-cased per file. Where the trace
does not carry a value, the test states the general rule it applies instead:

* the corpus app traced every API call as its own trace (no Traceloop workflow span around them), so a file may
  hold several traces: token sums are checked over all LLM calls of the file, and each trace case against its own
  trace's calls;
* the user's question is carried apart from the prompt only when a workflow/agent entity input or a retrieval query
  shares the trace with the LLM call; otherwise the trace knows only the user message the app sent;
* retrieved documents are carried only by vector-DB / retriever spans; the corpus RAG app retrieved in memory
  (only an embeddings call is traced, in a trace of its own), so its documents are not in the data.
"""

from __future__ import annotations

from typing import Any

import pytest
from corpus_loader import FileReport, api_call_cases, load_traces, manifest_files, map_file

from evald import semconv as sc
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openllmetry import OpenLLMetryMapper
from evald.mapping.openllmetry_attrs import ENTITY_INPUT, llm_operation
from evald.mapping.router import MapperRouter
from evald.model import AssembledTrace

ROUTER = MapperRouter([OpenLLMetryMapper(), GenAISemconvMapper()])
ENTRIES = manifest_files("traceloop-openai") + manifest_files("legacy.traceloop-openai")
_RETRIEVAL_EVENTS = (".query.result", ".search.result")


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['instrumentation']}/{entry['scenario']}"


@pytest.fixture(scope="module", params=ENTRIES, ids=_id)
def report(request: pytest.FixtureRequest) -> FileReport:
    return map_file(request.param, ROUTER)


def _traces(report: FileReport) -> list[AssembledTrace]:
    return load_traces(report.entry["file"])


def test_corpus_is_present_and_claimed() -> None:
    assert len(ENTRIES) == 16
    mapper = OpenLLMetryMapper()
    assert all(mapper.matches(t) for e in ENTRIES for t in load_traces(e["file"]))


def test_official_instrumentation_is_not_claimed() -> None:
    entries = manifest_files("otel-openai-v2")
    assert len(entries) == 16
    mapper = OpenLLMetryMapper()
    assert not any(mapper.matches(t) for e in entries for t in load_traces(e["file"]))
    for entry in entries:  # and the router still hands them to genai_semconv
        conventions = {c.metadata["convention"] for c in map_file(entry, ROUTER).llm_calls}
        assert conventions <= {"genai_semconv"}


def test_every_case_is_ours(report: FileReport) -> None:
    assert {c.metadata["convention"] for r in report.results for c in r.cases} <= {"openllmetry"}
    assert {n.convention for r in report.results for n in r.not_evaluable} <= {"openllmetry"}
    assert not [w for r in report.results for w in r.warnings]


def _carries_question(traces: list[AssembledTrace]) -> bool:
    """Entity input, or a retrieval/embedding span, in the same trace as an LLM call."""
    for trace in traces:
        ops = {llm_operation(s) for s in trace.spans}
        if ops & sc.INFERENCE_OPERATIONS and (
                any(ENTITY_INPUT in s.attributes for s in trace.spans) or sc.OP_EMBEDDINGS in ops):
            return True
    return False


def test_trace_case_fields(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    if gt["llm_call_count"] == 0:  # embeddings only
        assert report.trace_case is None and not report.llm_calls
        assert {(n.reason, n.scope) for r in report.results for n in r.not_evaluable} == {
            ("no_inference_span", "trace")}
        return
    case = report.trace_case
    assert case is not None
    traces = _traces(report)
    assert case.input == (gt["user_input"] if _carries_question(traces) else gt["user_message_sent"])
    assert case.output == gt["final_output"]
    assert (case.model, case.request_model) == (gt["response_model"], gt["request_model"])
    assert case.error is gt["error"]
    assert case.system_prompt == gt["system_prompt"]
    assert case.provider == "openai" and case.service_name == f"corpus-{report.entry['instrumentation']}"
    assert case.scope == "trace" and case.span_id and case.latency_ms and case.latency_ms > 0
    assert len(report.llm_calls) == gt["llm_call_count"]


def test_tokens(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    if gt["llm_call_count"] == 0:
        return
    tin = sum(c.input_tokens or 0 for c in report.llm_calls)
    tout = sum(c.output_tokens or 0 for c in report.llm_calls)
    assert (tin, tout) == (gt["input_tokens"], gt["output_tokens"])
    for result in report.results:  # each trace case sums its own trace's calls, once
        trace_cases = [c for c in result.cases if c.scope == "trace"]
        calls = [c for c in result.cases if c.scope == "llm_call"]
        for case in trace_cases:
            if gt["error"]:  # a failed call reports no usage: unknown, not 0
                assert case.input_tokens is None and case.token_count is None
                continue
            assert case.input_tokens == sum(c.input_tokens or 0 for c in calls)
            assert case.output_tokens == sum(c.output_tokens or 0 for c in calls)
            assert case.token_count == case.input_tokens + case.output_tokens


def test_retrieved_documents(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    case = report.trace_case
    if case is None:
        return
    carried = any(
        any(e.name.endswith(_RETRIEVAL_EVENTS) for e in s.events) or sc.RETRIEVAL_DOCUMENTS in s.attributes
        or "traceloop.entity.output" in s.attributes for t in _traces(report) for s in t.spans)
    if gt["retrieved_documents"] and carried:
        assert [(d.id, d.content, d.score) for d in case.context] == [
            (d["id"], d["content"], d["score"]) for d in gt["retrieved_documents"]]
    else:  # nothing retrieved, or retrieval not traced (see module docstring)
        assert case.context == ()


def test_llm_calls_match_each_api_call(report: FileReport) -> None:
    for case, api in api_call_cases(report):
        assert case.output == api.get("output_text")
        assert case.metadata["operation"] == "chat"
        if "response_id" in api:
            assert case.metadata["response_id"] == api["response_id"]
            assert (case.input_tokens, case.output_tokens) == (api["input_tokens"], api["output_tokens"])
            assert case.token_count == api["input_tokens"] + api["output_tokens"]
            # the 0.62 quirk ``tool_call`` and the API's ``tool_calls`` both normalise to the OTel value
            reason = api["finish_reason"]
            assert case.metadata["finish_reasons"] == [{"tool_calls": "tool_call"}.get(reason, reason)]
        else:
            assert case.metadata["error_type"] == "InternalServerError"
