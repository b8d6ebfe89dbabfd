"""De-duplication of inference spans in the GenAI mapper: two instrumentations tracing one request count once
(tokens, llm_call cases, tool calls), distinct requests never merge. Shapes: a framework's chat span around the
provider client's chat span (pydantic-ai around logfire / opentelemetry-instrumentation-openai-v2, see
docs/conventions-vendors.md), two exporters of one response side by side, identical concurrent requests."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evald.interfaces import MappingResult
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.model import STATUS_ERROR, AssembledTrace, SpanRecord
from evald.testing import span

TRACE = "0af7651916cd43dd8448eb211c80319c"
MAPPER = GenAISemconvMapper()
ROOT = "00000000000000f0"


def chat(span_id: str, parent: str | None = ROOT, *, start: float = 1, duration: float = 10, scope: str = "",
         question: str = "Weather in Paris?", answer: str | None = "Sunny.", call_id: str | None = None,
         response_id: str | None = None, usage: tuple[int, int] | None = (10, 2), model: str = "gpt-4o",
         extra: dict[str, Any] | None = None, status: int = 0) -> SpanRecord:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                             "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                                 {"type": "text", "content": question}]}])}
    parts: list[dict[str, Any]] = []
    if answer is not None:
        parts.append({"type": "text", "content": answer})
    if call_id is not None:
        parts.append({"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": {"city": "Paris"}})
    if parts:
        attrs["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": parts}])
    if response_id is not None:
        attrs["gen_ai.response.id"] = response_id
    if usage is not None:
        attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"] = usage
    attrs.update(extra or {})
    record = span(span_id=span_id, parent=parent, name=f"chat {model}", start_ms=start, duration_ms=duration,
                  attributes=attrs, status_code=status)
    return replace(record, scope_name=scope)


def run(*spans: SpanRecord) -> MappingResult:
    root = span(span_id=ROOT, name="app", duration_ms=1000)
    return MAPPER.map(AssembledTrace(TRACE, (root, *spans)))


def summary(result: MappingResult) -> tuple[list[str | None], tuple[int | None, int | None], list[str | None]]:
    (whole,) = [c for c in result.cases if c.scope == "trace"]
    calls = [c.span_id for c in result.cases if c.scope == "llm_call"]
    return calls, (whole.input_tokens, whole.output_tokens), [t.id for t in whole.tool_calls]


def test_nested_framework_and_client_spans_count_once() -> None:
    outer = chat("00000000000000a1", scope="pydantic-ai", start=1, duration=30, call_id="call_1")
    inner = chat("00000000000000a2", parent="00000000000000a1", scope="logfire.openai", start=2, duration=20,
                 call_id="call_1", response_id="chatcmpl-1")
    assert summary(run(outer, inner)) == (["00000000000000a2"], (10, 2), ["call_1"])


def test_inner_span_without_content_is_completed_from_its_wrapper() -> None:
    outer = chat("00000000000000a1", start=1, duration=30, usage=None)
    inner = span(span_id="00000000000000a2", parent="00000000000000a1", start_ms=2, attributes={
        "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 1,
        "gen_ai.response.model": "gpt-4o-2024-08-06"})
    result = run(outer, inner)
    (call,) = [c for c in result.cases if c.scope == "llm_call"]
    assert (call.span_id, call.input, call.output, call.model, call.input_tokens) == (
        "00000000000000a2", "Weather in Paris?", "Sunny.", "gpt-4o-2024-08-06", 7)


def test_wrapper_around_two_requests_is_not_a_third_call() -> None:
    outer = chat("00000000000000a1", start=1, duration=50, usage=(99, 99))
    first = chat("00000000000000a2", parent="00000000000000a1", start=2, usage=(5, 1), response_id="r1")
    second = chat("00000000000000a3", parent="00000000000000a1", start=20, usage=(6, 2), response_id="r2")
    assert summary(run(outer, first, second)) == (["00000000000000a2", "00000000000000a3"], (11, 3), [])


def test_siblings_with_the_same_response_id_count_once_keeping_the_most_detailed() -> None:
    bare = chat("00000000000000a1", scope="a", answer=None, usage=None, response_id="chatcmpl-9")
    full = chat("00000000000000a2", scope="b", start=3, call_id="call_1", response_id="chatcmpl-9")
    assert summary(run(bare, full)) == (["00000000000000a2"], (10, 2), ["call_1"])


def test_overlapping_siblings_from_two_scopes_are_one_request() -> None:
    one = chat("00000000000000a1", scope="opentelemetry.instrumentation.openai_v2", start=1, duration=20)
    two = chat("00000000000000a2", scope="logfire.openai", start=2, duration=18)
    assert summary(run(one, two))[:2] == (["00000000000000a1"], (10, 2))


def test_identical_concurrent_requests_of_one_instrumentation_stay_two_calls() -> None:
    one = chat("00000000000000a1", scope="opentelemetry.instrumentation.openai_v2", start=1, duration=20)
    two = chat("00000000000000a2", scope="opentelemetry.instrumentation.openai_v2", start=2, duration=18)
    other_model = chat("00000000000000a3", scope="logfire.openai", start=2, model="gpt-4o-mini")
    calls, tokens, _ = summary(run(one, two, other_model))
    assert (len(calls), tokens) == (3, (30, 6))


def test_different_response_ids_never_merge() -> None:
    one = chat("00000000000000a1", scope="x", response_id="r1")
    two = chat("00000000000000a2", scope="y", start=2, response_id="r2")
    assert len(summary(run(one, two))[0]) == 2


def test_failed_attempt_then_retry_keeps_both_and_the_error() -> None:
    failed = chat("00000000000000a1", answer=None, usage=None, status=STATUS_ERROR)
    retry = chat("00000000000000a2", start=20)
    result = run(failed, retry)
    (whole,) = [c for c in result.cases if c.scope == "trace"]
    assert len([c for c in result.cases if c.scope == "llm_call"]) == 2 and whole.error


@st.composite
def double_traced(draw: st.DrawFn) -> tuple[AssembledTrace, int, int, int]:
    """Distinct requests (unique response ids, usage, tool call ids) nested at random, some traced a second time by
    another instrumentation: as a wrapper around it, or as a sibling carrying the same response id."""
    count = draw(st.integers(min_value=1, max_value=5))
    spans: list[SpanRecord] = [span(span_id=ROOT, name="app", duration_ms=10_000)]
    tin = tout = 0
    for i in range(count):
        usage = (draw(st.integers(0, 500)), draw(st.integers(0, 500)))
        tin, tout = tin + usage[0], tout + usage[1]
        sid, start = f"{i + 1:08x}00000001", 100.0 * i
        kwargs: dict[str, Any] = {"question": f"question {i}", "call_id": f"call_{i}", "response_id": f"resp_{i}",
                                  "usage": usage}
        how = draw(st.sampled_from(["alone", "wrapped", "sibling", "wrapped_twice"]))
        parent = ROOT
        if how in ("wrapped", "wrapped_twice"):  # framework span(s) around the client span, with the same usage
            for depth in range(1 if how == "wrapped" else 2):
                wid = f"{i + 1:08x}0000010{depth}"
                spans.append(chat(wid, parent, start=start + depth, duration=50 - depth, scope=f"framework{depth}",
                                  **{**kwargs, "response_id": None}))
                parent = wid
        spans.append(chat(sid, parent, start=start + 2, duration=40, scope="client", **kwargs))
        if how == "sibling":
            spans.append(chat(f"{i + 1:08x}00000002", parent, start=start + 3, duration=30, scope="other", **kwargs))
    return AssembledTrace(TRACE, tuple(spans)), tin, tout, count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(double_traced())
def test_each_request_counts_once(case: tuple[AssembledTrace, int, int, int]) -> None:
    trace, tin, tout, count = case
    result = MAPPER.map(trace)
    (whole,) = [c for c in result.cases if c.scope == "trace"]
    calls = [c for c in result.cases if c.scope == "llm_call"]
    assert (whole.input_tokens, whole.output_tokens) == (tin, tout)
    assert len(calls) == count == whole.metadata["llm_call_count"]
    assert sorted(t.id or "" for t in whole.tool_calls) == sorted(f"call_{i}" for i in range(count))
