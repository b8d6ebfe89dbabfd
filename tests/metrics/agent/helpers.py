"""Builders shared by the agent metric tests."""

from __future__ import annotations

from typing import Any

from evald.case import EvalCase, Score, ToolCall
from evald.metrics.base import BaseMetric


def trajectory(*calls: str | tuple[str, Any], **fields: Any) -> EvalCase:
    """An EvalCase whose tool calls are names or ``(name, arguments)`` pairs, in call order."""
    tool_calls = tuple(ToolCall(c) if isinstance(c, str) else ToolCall(c[0], c[1]) for c in calls)
    return EvalCase(tool_calls=tool_calls, **fields)


def measure(metric: BaseMetric, case: EvalCase) -> Score:
    score = metric.measure(case)
    assert score is not None
    return score


def rules_of(score: Score) -> list[str]:
    return [v["rule"] for v in score.metadata["violations"]]
