"""``tool_not_called``: the agent never called a given tool."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import Glob, matches, violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric


class ToolNotCalledOptions(ComponentConfig):
    tool: Glob = Field(description="tool name or glob that must not be called (required)")


class ToolNotCalledMetric(BaseMetric):
    """Whether no tool matching ``tool`` was called (1 or 0).

    Reads ``tool_calls``. Value 1 when no call's name matches the `tool` glob, else 0 with one violation
    `{rule: "tool_not_called", tool, index, constraint}` per matching call. Applies to every case: an empty
    trajectory scores 1.
    """

    kind: ClassVar[str] = "tool_not_called"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = ToolNotCalledOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        pattern = cast(ToolNotCalledOptions, self.options).tool
        violations = [
            violation("tool_not_called", f"{call.name} called at index {index} (must not call {pattern!r})",
                      tool=call.name, index=index, constraint=f"not called: {pattern}")
            for index, call in enumerate(eval_case.tool_calls) if matches(call.name, pattern)
        ]
        headline = f"{pattern!r} called {len(violations)} time(s)" if violations else f"{pattern!r} not called"
        return self.score(0.0 if violations else 1.0, with_violations(headline, violations),
                          calls_found=len(violations), **violation_metadata(violations))
