"""``tool_call_order``: tools were called in a given relative order."""

from __future__ import annotations

from typing import Annotated, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import (
    Glob,
    align,
    matches,
    tool_names,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.base import BaseMetric


class ToolCallOrderOptions(ComponentConfig):
    order: Annotated[list[Glob], Field(min_length=2)] = Field(
        description="tool names or globs that must be called in this relative order (required, at least two)"
    )


class ToolCallOrderMetric(BaseMetric):
    """Whether tools matching ``order`` were called in that relative order.

    Reads ``tool_calls``. Other calls may come in between (it is a subsequence check). Value = the length of the
    longest part of `order` found in the trajectory in the same order / `len(order)` (a longest common
    subsequence, where a call matches an entry when its name matches the glob): 1 when the whole order is
    present; `order: [a, b, c]` on calls `[b, c]` scores 2/3. Each entry left out is one violation
    `{rule: "tool_call_order", tool: <glob>, expected: "a -> b -> c", index, message}`: never called, or called
    only out of order (`index` is its first call). Applies to every case: an empty trajectory scores 0.
    """

    kind: ClassVar[str] = "tool_call_order"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = ToolCallOrderOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        order = cast(ToolCallOrderOptions, self.options).order
        names = tool_names(eval_case)
        aligned = dict(align(order, names, lambda pattern, name: matches(name, pattern)))
        expected = " -> ".join(order)
        violations = []
        for step, pattern in enumerate(order):
            if step in aligned:
                continue
            first = next((i for i, name in enumerate(names) if matches(name, pattern)), None)
            if first is None:
                violations.append(violation("tool_call_order", f"{pattern!r} (step {step + 1} of {len(order)}) was "
                                            "never called", tool=pattern, expected=expected))
            else:
                violations.append(violation("tool_call_order", f"{pattern!r} (step {step + 1} of {len(order)}) was "
                                            f"called out of order (first at index {first})", tool=pattern,
                                            index=first, expected=expected))
        headline = f"{len(aligned)} of {len(order)} step(s) in order"
        return self.score(len(aligned) / len(order), with_violations(headline, violations),
                          steps_in_order=len(aligned), **violation_metadata(violations))
