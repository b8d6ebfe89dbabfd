"""``tool_called``: the agent called a given tool at least once."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import Glob, matches, violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric


class ToolCalledOptions(ComponentConfig):
    tool: Glob = Field(description="tool name or glob that must be called (required)")


class ToolCalledMetric(BaseMetric):
    """Whether a tool matching ``tool`` was called (1 or 0).

    Reads ``tool_calls``. Value 1 when at least one call's name matches the `tool` glob, else 0 with one
    violation `{rule: "tool_called", tool, value: 0, constraint}`; `calls_found` counts the matching calls.
    Applies to every case: an empty trajectory is a fail (0), not "not applicable".
    """

    kind: ClassVar[str] = "tool_called"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = ToolCalledOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        pattern = cast(ToolCalledOptions, self.options).tool
        found = [i for i, call in enumerate(eval_case.tool_calls) if matches(call.name, pattern)]
        if found:
            return self.score(1.0, f"{pattern!r} called {len(found)} time(s), first at index {found[0]}",
                              calls_found=len(found), **violation_metadata([]))
        violations = [violation("tool_called", f"expected {pattern!r} to be called, it was never called "
                                f"({len(eval_case.tool_calls)} call(s) in the trajectory)", tool=pattern, value=0,
                                constraint="called at least once")]
        return self.score(0.0, with_violations("tool not called", violations), calls_found=0,
                          **violation_metadata(violations))
