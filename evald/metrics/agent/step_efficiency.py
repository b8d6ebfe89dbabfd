"""``step_efficiency``: the agent reached its goal in about the optimal number of tool calls."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric


class StepEfficiencyOptions(ComponentConfig):
    optimal_steps: int | None = Field(
        None, ge=0, description="the optimal number of tool calls; default: the number of the case's expected_tools"
    )


class StepEfficiencyMetric(BaseMetric):
    """How close the number of tool calls is to the optimal number.

    Reads ``tool_calls`` (one call is one step) and, unless `optimal_steps` is set, ``expected_tools`` (its
    length is the optimal number of steps). Value = min(1, optimal / actual): 1 at or below the optimum (an
    empty trajectory included), 4 optimal steps in 6 calls score 4/6 ≈ 0.67, and with an optimum of 0 any call
    scores 0. The default threshold 0.5 passes up to twice the optimal number of calls. Over the optimum, one
    violation `{rule: "step_efficiency", value: <steps>, constraint: "optimal_steps: N"}`.

    Not applicable when neither `optimal_steps` nor the case's ``expected_tools`` is given.
    """

    kind: ClassVar[str] = "step_efficiency"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    Options: ClassVar[type[ComponentConfig]] = StepEfficiencyOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        optimal = cast(StepEfficiencyOptions, self.options).optimal_steps
        if optimal is None:
            if eval_case.expected_tools is None:
                return None
            optimal = len(eval_case.expected_tools)
        steps = len(eval_case.tool_calls)
        value = 1.0 if steps <= optimal else optimal / steps
        violations = []
        if steps > optimal:
            violations.append(violation("step_efficiency", f"{steps} tool call(s) where {optimal} would do "
                                        f"({steps - optimal} extra)", value=steps,
                                        constraint=f"optimal_steps: {optimal}"))
        headline = f"{steps} step(s), optimal {optimal}"
        return self.score(value, with_violations(headline, violations), steps=steps, optimal_steps=optimal,
                          **violation_metadata(violations))
