"""``tool_called_with``: the agent called a given tool with (at least) the expected arguments."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import (
    Glob,
    argument_violations,
    arguments_of,
    matches,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.base import BaseMetric


class ToolCalledWithOptions(ComponentConfig):
    tool: Glob = Field(description="tool name or glob (required)")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="arguments the call must have with these values (others are allowed)"
    )


class ToolCalledWithMetric(BaseMetric):
    """Whether a tool matching ``tool`` was called with the expected arguments (1 or 0).

    Reads ``tool_calls``. Value 1 when some call's name matches the `tool` glob and its arguments contain every
    key of `arguments` with an equal value (JSON equality: `1 == 1.0`, `true != 1`; nested values compare
    whole); other arguments are allowed. With no `arguments` it is the same as `tool_called`. Otherwise 0, with
    violations: `{rule: "tool_called_with", tool, constraint: "called"}` when the tool was never called, else
    the argument differences of the closest call (fewest differences, earliest first) as `{rule, tool, index,
    argument, value, expected, constraint}`. Applies to every case: an empty trajectory is a fail (0).
    """

    kind: ClassVar[str] = "tool_called_with"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "tool_arguments")
    Options: ClassVar[type[ComponentConfig]] = ToolCalledWithOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ToolCalledWithOptions, self.options)
        differences: list[tuple[int, list[dict[str, Any]]]] = [
            (index, argument_violations("tool_called_with", call.name, index, opts.arguments,
                                        arguments_of(call) or {}))
            for index, call in enumerate(eval_case.tool_calls) if matches(call.name, opts.tool)
        ]
        matching = [index for index, problems in differences if not problems]
        if matching:
            return self.score(1.0, f"{opts.tool!r} called with the expected arguments at index {matching[0]}",
                              calls_found=len(differences), **violation_metadata([]))
        if not differences:
            violations = [violation("tool_called_with", f"expected {opts.tool!r} to be called, it was never called",
                                    tool=opts.tool, constraint="called")]
            headline = "tool not called"
        else:
            index, violations = min(differences, key=lambda item: len(item[1]))
            headline = f"no {opts.tool!r} call has the expected arguments; closest is index {index}"
        return self.score(0.0, with_violations(headline, violations), calls_found=len(differences),
                          **violation_metadata(violations))
