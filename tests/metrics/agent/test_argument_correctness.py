"""argument_correctness (deterministic): partial credit per key, by hand."""

from __future__ import annotations

import pytest

from evald.case import EvalCase, ToolCall
from evald.metrics.agent.argument_correctness import ArgumentCorrectnessMetric

EXPECTED = [{"name": "search", "arguments": {"q": "x", "k": 5}}, {"name": "fetch", "arguments": {"id": 1}}]


def _value(calls: tuple[ToolCall, ...], **options: object) -> float | None:
    score = ArgumentCorrectnessMetric(options=options).measure(EvalCase(tool_calls=calls, expected=EXPECTED))
    return None if score is None else score.value


def test_exact_and_subset_credit() -> None:
    calls = (ToolCall("search", {"q": "x", "k": 3, "lang": "en"}),)
    assert _value(calls) == pytest.approx(1 / 3)  # q right; k wrong; lang extraneous
    assert _value(calls, mode="subset") == pytest.approx(1 / 2)
    assert _value(calls, ignore_keys=["lang"]) == pytest.approx(1 / 2)


def test_mean_over_calls_to_expected_tools_only() -> None:
    calls = (ToolCall("search", '{"q": "x", "k": 5}'), ToolCall("other", {}), ToolCall("fetch", {"id": 2}),
             ToolCall("fetch", "not json"))
    assert _value(calls) == pytest.approx((1.0 + 0.0 + 0.0) / 3)


def test_not_applicable_without_expected_calls_or_matching_tools() -> None:
    assert _value((ToolCall("other", {}),)) is None
    metric = ArgumentCorrectnessMetric()
    assert metric.measure(EvalCase(tool_calls=(ToolCall("search", {}),), expected="text")) is None
