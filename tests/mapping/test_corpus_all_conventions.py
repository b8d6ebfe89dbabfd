"""Every corpus file, through the default router (all conventions), against the manifest's ground truth.

The per-convention tests (test_corpus_genai.py, test_openinference.py, test_openllmetry_corpus.py) assert the
details and the documented rules; this one guards the whole table that ``python tests/corpus_table.py`` prints:
each file is claimed by the mapper of its own convention, and the fields every convention carries match exactly.
Where a trace does not carry a value at all (no retrieval span in the OpenLLMetry RAG runs, one trace per API call
in the OpenLLMetry tool run, no document text on official retrieval spans), the field is left to the
convention's own tests, which assert what *is* there.
"""

from __future__ import annotations

from typing import Any

import pytest
from corpus_loader import FileReport, load_traces, manifest_files, map_file

from evald.case import SPAN_END_METADATA

ENTRIES = manifest_files()
CONVENTION = {
    "otel-openai-v2": "genai_semconv",
    "openinference": "openinference",
    "traceloop-openai": "openllmetry",
    "legacy.traceloop-openai": "openllmetry",
}
ALWAYS_EXACT = ("evaluable", "output", "model", "request_model", "tool_calls", "tool_results", "error",
                "system_prompt", "llm_calls")


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['instrumentation']}/{entry['scenario']}"


@pytest.fixture(scope="module", params=ENTRIES, ids=_id)
def report(request: pytest.FixtureRequest) -> FileReport:
    return map_file(request.param)


def test_the_corpus_covers_every_configuration() -> None:
    assert {e["instrumentation"] for e in ENTRIES} == {
        "otel-openai-v2.span_only", "otel-openai-v2.event_only", "openinference-openai", "openinference-langchain",
        "traceloop-openai", "legacy.traceloop-openai"}


def test_each_file_is_read_by_its_own_convention(report: FileReport) -> None:
    instrumentation = report.entry["instrumentation"]
    expected = next(v for k, v in CONVENTION.items() if instrumentation.startswith(k))
    conventions = {c.metadata.get("convention") for r in report.results for c in r.cases}
    conventions |= {n.convention for r in report.results for n in r.not_evaluable}
    assert conventions == {expected}


def test_fields_every_convention_carries_match_exactly(report: FileReport) -> None:
    failed = {name: (c.expected, c.actual) for name, c in report.checks.items()
              if name in ALWAYS_EXACT and c.ok is False}
    assert not failed, failed


def test_no_tool_call_of_the_corpus_failed(report: FileReport) -> None:
    # their names, arguments, ids and results: ``tool_calls`` / ``tool_results`` in ALWAYS_EXACT above
    case = report.trace_case
    assert case is None or not any(t.error for t in case.tool_calls)


def test_input_is_the_question_or_at_worst_the_prompt_the_app_sent(report: FileReport) -> None:
    check = report.checks.get("input")
    assert check is None or check.ok is True, (check.expected, check.actual)


def test_every_case_names_the_end_time_of_its_own_span(report: FileReport) -> None:
    """Exporters stamp scores with ``span_end_unix_nano``; every built-in mapper sets it, so the pipeline does not
    copy the case to add it."""
    ends = {s.span_id: s.end_time_unix_nano for t in load_traces(report.entry["file"]) for s in t.spans}
    cases = [c for r in report.results for c in r.cases]
    assert cases or report.trace_case is None  # files without cases (embeddings only) have nothing to check
    for case in cases:
        assert case.span_id is not None and case.metadata[SPAN_END_METADATA] == ends[case.span_id] > 0
