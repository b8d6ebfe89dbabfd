"""Masking markers are no text (evald/mapping/masking.py), and the content-capture status of each case."""

from __future__ import annotations

import json

import pytest

from evald.interfaces import MappingResult
from evald.mapping.content_capture import annotate
from evald.mapping.instrumentations import OPENINFERENCE, OPENLLMETRY, OTEL_GENAI, OTHER, detect
from evald.mapping.masking import is_masked, marker_in
from evald.mapping.values import as_text
from evald.model import AssembledTrace, SpanRecord
from tests.metrics.test_requirements import case

TRACE = "b" * 32


@pytest.mark.parametrize("marker", ["__REDACTED__", "[Scrubbed due to 'password']", "[REDACTED]", "<redacted>",
                                    ' "__REDACTED__" ', "[Scrubbed due to 'api key']"])
def test_a_marker_is_no_text(marker: str) -> None:
    assert is_masked(marker) and as_text(marker) is None


@pytest.mark.parametrize("text", ["Paris", "My name is [REDACTED] and I live in Paris", "REDACTED files are 3",
                                  "", "x" * 300])
def test_text_with_a_redacted_part_is_still_text(text: str) -> None:
    assert not is_masked(text)


def test_markers_are_found_in_nested_attribute_values_and_json_text() -> None:
    assert marker_in([{"input.value": "What?"}, {"output.value": "__REDACTED__"}]) == "__REDACTED__"
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "__REDACTED__"}]}])
    assert marker_in([{"gen_ai.input.messages": messages}]) == "__REDACTED__"
    assert marker_in([{"a": ["x", {"b": "[Scrubbed due to 'secret']"}]}]) == "[Scrubbed due to 'secret']"
    assert marker_in([{"a": "plain"}, {"b": 3}]) is None


def span(scope: str, **attrs: object) -> SpanRecord:
    return SpanRecord(TRACE, "0" * 15 + "1", None, "chat", 3, 1, 2, attrs, scope_name=scope)


def statuses(trace: AssembledTrace, *cases: object) -> list[tuple[str, str, str | None]]:
    result = annotate(trace, MappingResult(cases=tuple(cases)))  # type: ignore[arg-type]
    return [(c.metadata["content_capture"], c.metadata["instrumentation"], c.metadata.get("mask_marker"))
            for c in result.cases]


def test_each_case_gets_its_content_status_and_instrumentation() -> None:
    masked = AssembledTrace(TRACE, (span("openinference.instrumentation.openai", **{"input.value": "__REDACTED__"}),))
    plain = AssembledTrace(TRACE, (span("opentelemetry.instrumentation.openai_v2"),))
    sid = "0" * 15 + "1"
    assert statuses(plain, case(span_id=sid, input="q", output="a", metadata={"convention": "genai_semconv"})) == [
        ("full", "openai-v2", None)]
    assert statuses(plain, case(span_id=sid, input="q", metadata={})) == [("partial", "openai-v2", None)]
    assert statuses(plain, case(span_id=sid, error=True, input="q", metadata={})) == [("full", "openai-v2", None)]
    assert statuses(plain, case(span_id=sid, metadata={})) == [("none", "openai-v2", None)]
    assert statuses(masked, case(span_id=sid, metadata={"convention": "openinference"})) == [
        ("masked", "openinference", "__REDACTED__")]


def test_instrumentations_by_scope_and_convention() -> None:
    assert detect(("opentelemetry.instrumentation.openai.v1",), "openllmetry") is OPENLLMETRY
    assert detect(("opentelemetry.instrumentation.google_genai",), "genai_semconv") is OTEL_GENAI
    assert detect(("opentelemetry.instrumentation.langchain",), "genai_semconv") is OTEL_GENAI
    assert detect(("capture-app", "openinference.instrumentation.langchain"), "openinference") is OPENINFERENCE
    assert detect(("com.anthropic.sdk.python",), "genai_semconv").id == "anthropic-sdk"
    assert detect(("my.app",), None) is OTHER
    assert detect(("my.app",), "openinference") is OPENINFERENCE


def test_marker_names_ids_and_roles_are_not_recorded() -> None:
    """A Langfuse mask applied to every string turns tool names, call ids and roles into markers too."""
    from evald.case import Message, ToolCall

    sid = "0" * 15 + "1"
    masked = case(span_id=sid, input="q", output="a", metadata={},
                  tool_calls=(ToolCall("REDACTED", None, None, "REDACTED"), ToolCall("get_weather", id="call_1")),
                  messages=(Message("REDACTED", None, (ToolCall("[REDACTED]"),), "__REDACTED__"), Message("user", "q")))
    [out] = annotate(AssembledTrace(TRACE, (span("langfuse-sdk"),)), MappingResult(cases=(masked,))).cases
    assert [(t.name, t.id) for t in out.tool_calls] == [("", None), ("get_weather", "call_1")]
    assert [(m.role, m.tool_call_id, [t.name for t in m.tool_calls]) for m in out.messages] == [
        ("unknown", None, [""]), ("user", None, [])]
