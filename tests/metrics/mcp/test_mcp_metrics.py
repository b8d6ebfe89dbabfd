"""tool_selection_accuracy and mcp_trace_completeness: hand-computed values and harness-evals' classes."""

from __future__ import annotations

from typing import Any

import pytest
from harness_evals import ToolCall as HToolCall
from harness_evals.metrics.mcp import MCPTraceCompletenessMetric as HTrace
from harness_evals.metrics.mcp import ToolSelectionAccuracyMetric as HSelection

from evald.case import EvalCase, ToolCall
from evald.metrics.harness_case import to_harness_case
from evald.metrics.mcp.mcp_trace_completeness import MCPTraceCompletenessMetric
from evald.metrics.mcp.tool_selection_accuracy import ToolSelectionAccuracyMetric


@pytest.mark.parametrize(("called", "expected", "value"), [
    (["search", "search", "fetch"], ["search", "summarize"], 1 / 4),
    (["search", "fetch"], ["fetch", "search"], 1.0),
    ([], [], 1.0),
    (["a"], [], 0.0),
])
def test_tool_selection_accuracy_is_multiset_jaccard(called: list[str], expected: list[str], value: float) -> None:
    case = EvalCase(tool_calls=tuple(ToolCall(n) for n in called), expected_tools=tuple(expected))
    score = ToolSelectionAccuracyMetric().measure(case)
    assert score is not None and score.value == pytest.approx(value)
    theirs = to_harness_case(case)
    theirs.tool_calls = theirs.tool_calls or []  # evald has no "not recorded" list: harness-evals' None scores 0
    assert score.value == pytest.approx(HSelection().measure(theirs).value, abs=1e-9)


def test_tool_selection_accuracy_not_applicable_without_expected_tools() -> None:
    assert ToolSelectionAccuracyMetric().measure(EvalCase(tool_calls=(ToolCall("a"),))) is None


def test_mcp_trace_completeness_matches_name_and_arguments_once_each() -> None:
    expected: list[dict[str, Any]] = [{"name": "search", "arguments": {"q": "a"}},
                                      {"name": "fetch", "arguments": {"id": 1}},
                                      {"name": "search", "arguments": {"q": "a"}}]
    calls = (ToolCall("search", {"q": "a"}), ToolCall("fetch", '{"id": 2}'))
    metric = MCPTraceCompletenessMetric(options={"expected_trace": expected})
    score = metric.measure(EvalCase(tool_calls=calls))
    assert score is not None and score.value == pytest.approx(1 / 3)
    assert [m["name"] for m in score.metadata["missing"]] == ["fetch", "search"]
    harness = HTrace(expected_trace=[HToolCall(name=e["name"], input=e["arguments"]) for e in expected])
    assert score.value == pytest.approx(harness.measure(to_harness_case(EvalCase(tool_calls=calls))).value)


def test_mcp_trace_completeness_reads_expected_then_expected_tools() -> None:
    calls = (ToolCall("search", {"q": "a"}),)
    from_expected = EvalCase(tool_calls=calls, expected=[{"name": "search", "arguments": {"q": "b"}}])
    score = MCPTraceCompletenessMetric().measure(from_expected)
    assert score is not None and score.value == 0.0
    from_names = EvalCase(tool_calls=calls, expected_tools=("search", "fetch"))
    score = MCPTraceCompletenessMetric().measure(from_names)
    assert score is not None and score.value == 0.5
    assert MCPTraceCompletenessMetric().measure(EvalCase(tool_calls=calls)) is None
