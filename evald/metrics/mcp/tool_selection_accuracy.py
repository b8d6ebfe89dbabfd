"""``tool_selection_accuracy``: Jaccard similarity of the called tools and the expected tools (multisets)."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import tool_names
from evald.metrics.base import BaseMetric


class ToolSelectionAccuracyOptions(ComponentConfig):
    expected_tools: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="expected tool names; default: the case's `expected_tools`"
    )


class ToolSelectionAccuracyMetric(BaseMetric):
    """Jaccard similarity of the called tool names and the expected tool names, as multisets.

    harness-evals' ToolSelectionAccuracy (MCP category): with A the called names (``tool_calls``, which include
    MCP ``tools/call`` spans) and E the expected names (option ``expected_tools``, else the case's
    ``expected_tools``), value = sum(min(A[t], E[t])) / sum(max(A[t], E[t])) over all tool names t, 1 when both
    are empty. Example: A = [search, search, fetch], E = [search, summarize]: intersection 1, union 4: 0.25.
    Unlike ``tool_correctness`` (recall of the expected tools), extra calls lower the value.

    Not applicable when no expected tools are known (harness-evals scores that 0).
    """

    kind: ClassVar[str] = "tool_selection_accuracy"
    family: ClassVar[str] = "mcp"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    Options: ClassVar[type[ComponentConfig]] = ToolSelectionAccuracyOptions

    def required_fields(self) -> tuple[str, ...]:
        return ("tool_calls",) if cast(ToolSelectionAccuracyOptions, self.options).expected_tools else self.needs

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ToolSelectionAccuracyOptions, self.options)
        source = opts.expected_tools if opts.expected_tools is not None else eval_case.expected_tools
        if source is None:
            return None
        called, expected = tool_names(eval_case), list(source)
        have, want = Counter(called), Counter(expected)
        names = set(have) | set(want)
        intersection = sum(min(have[t], want[t]) for t in names)
        union = sum(max(have[t], want[t]) for t in names)
        value = intersection / union if union else 1.0
        return self.score(value, f"{intersection} of {union} tool(s) overlap (Jaccard {intersection}/{union})",
                          actual_tools=called, expected_tools=expected, intersection=intersection, union=union)
