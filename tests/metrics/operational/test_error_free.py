from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase, ToolCall
from evald.metrics.operational.error_free import ErrorFreeMetric


def test_a_case_without_errors_passes() -> None:
    score = ErrorFreeMetric().measure(EvalCase(output="ok", tool_calls=(ToolCall("search"),)))
    assert score is not None and score.passed and score.value == 1.0 and score.reason == "no errors"
    assert score.dimension is Dimension.PERFORMANCE and score.threshold == 1.0
    assert score.metadata == {"llm_error": False, "failed_tool_calls": 0}


def test_an_errored_llm_call_fails_and_names_its_span() -> None:
    case = EvalCase(error=True, scope="llm_call", span_id="00f067aa0ba902b7", trace_id="a" * 32)
    score = ErrorFreeMetric().measure(case)
    assert score is not None and not score.passed and score.value == 0.0
    assert score.reason == "LLM call span 00f067aa0ba902b7 ended in error"


def test_an_errored_trace_fails_and_names_the_trace() -> None:
    score = ErrorFreeMetric().measure(EvalCase(error=True, scope="trace", trace_id="a" * 32))
    assert score is not None and score.value == 0.0 and score.reason is not None and "a" * 32 in score.reason


def test_failed_tool_calls_fail_and_are_named() -> None:
    tools = (ToolCall("search"), ToolCall("get_weather", error=True), ToolCall("", id="call_7", error=True))
    score = ErrorFreeMetric().measure(EvalCase(output="ok", tool_calls=tools))
    assert score is not None and score.value == 0.0
    assert score.reason == "2 tool call(s) failed: 'get_weather', 'call_7'"
    assert score.metadata == {"llm_error": False, "failed_tool_calls": 2}


def test_llm_and_tool_errors_are_both_reported() -> None:
    tools = tuple(ToolCall(f"t{i}", error=True) for i in range(7))
    score = ErrorFreeMetric().measure(EvalCase(error=True, scope="llm_call", span_id="s1", tool_calls=tools))
    assert score is not None and score.reason is not None
    assert score.reason.startswith("LLM call span s1 ended in error; 7 tool call(s) failed")
    assert score.reason.endswith("and 2 more")


def test_never_returns_none() -> None:
    score = ErrorFreeMetric().measure(EvalCase())
    assert score is not None and score.value == 1.0


def test_takes_no_options() -> None:
    with pytest.raises(ValidationError):
        ErrorFreeMetric(options={"strict": True})
