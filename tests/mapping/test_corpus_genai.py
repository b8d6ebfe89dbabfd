"""Ground truth: the official OTel GenAI instrumentation corpus (span_only and event_only) maps to the right cases.

The corpus lives in tests/testdata/corpus (a copy; tests never read outside the project). Expected values come
from manifest.json; nothing here is special-cased per file. Where the trace itself does not carry a value, the
test states the general rule it applies instead (see ``expected_input``).
"""

from __future__ import annotations

from typing import Any

import pytest
from corpus_loader import FileReport, api_call_cases, load_traces, manifest_files, map_file

from evald import semconv as sc
from evald.mapping.genai_semconv import GenAISemconvMapper

ENTRIES = manifest_files("otel-openai-v2")


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['instrumentation']}/{entry['scenario']}"


@pytest.fixture(scope="module", params=ENTRIES, ids=_id)
def report(request: pytest.FixtureRequest) -> FileReport:
    return map_file(request.param)


def test_corpus_is_present() -> None:
    assert len(ENTRIES) == 16
    assert all(GenAISemconvMapper().matches(t) for e in ENTRIES for t in load_traces(e["file"]))


def expected_input(report: FileReport) -> str:
    """The user's question when an agent/workflow span carries it; otherwise the trace only knows the user message
    the app sent to the model (for RAG that is the whole prompt with the context pasted in)."""
    gt = report.entry["ground_truth"]
    traces = load_traces(report.entry["file"])
    agent_input = any(
        sc.operation_of(s.attributes) in sc.AGENT_OPERATIONS
        and (sc.INPUT_MESSAGES in s.attributes or any(sc.INPUT_MESSAGES in g.attributes for g in t.logs_for(s.span_id)))
        for t in traces for s in t.spans
    )
    return str(gt["user_input"] if agent_input else gt["user_message_sent"])


def test_every_field_matches_ground_truth(report: FileReport) -> None:
    failed = {
        name: (check.expected, check.actual) for name, check in report.checks.items()
        if check.ok is False and name not in ("input", "doc_ids_scores", "doc_content")  # asserted below, with rules
    }
    assert not failed, failed


def test_trace_case_basics(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    if gt["llm_call_count"] == 0:
        assert report.trace_case is None and not report.llm_calls
        reasons = {(n.reason, n.scope) for r in report.results for n in r.not_evaluable}
        assert reasons == {("no_inference_span", "trace")}
        return
    case = report.trace_case
    assert case is not None
    assert case.input == expected_input(report)
    assert case.output == gt["final_output"]
    assert (case.model, case.request_model) == (gt["response_model"], gt["request_model"])
    assert case.error is gt["error"]
    assert case.system_prompt == gt["system_prompt"]
    assert len(report.llm_calls) == gt["llm_call_count"]
    assert case.scope == "trace" and case.span_id and case.latency_ms and case.latency_ms > 0
    assert case.provider == "openai" and case.service_name == f"corpus-{report.entry['instrumentation']}"
    if gt["error"]:
        assert case.output is None
    else:
        assert (case.input_tokens, case.output_tokens) == (gt["input_tokens"], gt["output_tokens"])
        assert case.token_count == gt["input_tokens"] + gt["output_tokens"]


def test_retrieved_documents(report: FileReport) -> None:
    gt = report.entry["ground_truth"]
    case = report.trace_case
    if case is None:
        return
    carried = any(sc.RETRIEVAL_DOCUMENTS in s.attributes for t in load_traces(report.entry["file"]) for s in t.spans)
    if gt["retrieved_documents"] and carried:
        assert [(d.id, d.score) for d in case.context] == [(d["id"], d["score"]) for d in gt["retrieved_documents"]]
        assert all(d.content is None for d in case.context)  # official retrieval spans never carry document text
    else:  # nothing retrieved, or event_only: the retrieval span carries neither query nor documents
        assert case.context == ()


def test_llm_calls_match_each_api_call(report: FileReport) -> None:
    for case, api in api_call_cases(report):
        assert case.output == api.get("output_text")
        if "response_id" in api:
            assert case.metadata["response_id"] == api["response_id"]
            assert (case.input_tokens, case.output_tokens) == (api["input_tokens"], api["output_tokens"])
