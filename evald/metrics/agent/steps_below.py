"""``steps_below``: the agent made at most ``max_steps`` tool calls."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric


class StepsBelowOptions(ComponentConfig):
    max_steps: int = Field(ge=0, description="most tool calls allowed (required)")


class StepsBelowMetric(BaseMetric):
    """Whether the number of tool calls is at most ``max_steps`` (1 or 0).

    Reads ``tool_calls``: one step is one tool call. Value 1 when `len(tool_calls) <= max_steps`, else 0 with
    one violation `{rule: "steps_below", value: <steps>, constraint: "max_steps: N", index}` where `index` is
    the first call over the budget. Applies to every case: an empty trajectory has 0 steps and scores 1.
    """

    kind: ClassVar[str] = "steps_below"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = StepsBelowOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        max_steps = cast(StepsBelowOptions, self.options).max_steps
        steps = len(eval_case.tool_calls)
        violations = []
        if steps > max_steps:
            violations.append(violation("steps_below", f"{steps} tool call(s), at most {max_steps} allowed (call "
                                        f"{max_steps + 1} at index {max_steps} is over)", value=steps,
                                        constraint=f"max_steps: {max_steps}", index=max_steps))
        headline = "over the step budget" if violations else f"{steps} step(s) within the budget of {max_steps}"
        return self.score(0.0 if violations else 1.0, with_violations(headline, violations), steps=steps,
                          max_steps=max_steps, **violation_metadata(violations))
