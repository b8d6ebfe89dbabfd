"""``tool_blocklist``: no tool call matches a blocked glob (Assay's ``tool_blocklist``)."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import GlobList, matches, violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric


class ToolBlocklistOptions(ComponentConfig):
    blocklist: GlobList = Field(description="blocked tool names or globs, e.g. `admin_*`, `*_dangerous` (required)")


class ToolBlocklistMetric(BaseMetric):
    """Whether no blocked tool was called (1 or 0).

    Reads ``tool_calls``. A call is blocked when its name matches any `blocklist` glob (`fnmatch`: `*`, `?`,
    `[seq]`; case-sensitive). Value 1 when no call is blocked, else 0. Each blocked call is one violation
    `{rule: "blocklist", tool, index, constraint: "blocklist: <glob>"}`; `calls_found` counts them.
    Applies to every case: an empty trajectory scores 1.
    """

    kind: ClassVar[str] = "tool_blocklist"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = ToolBlocklistOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ToolBlocklistOptions, self.options)
        violations = []
        for index, call in enumerate(eval_case.tool_calls):
            pattern = next((p for p in opts.blocklist if matches(call.name, p)), None)
            if pattern is not None:
                violations.append(violation(
                    "blocklist", f"blocked tool {call.name} called at index {index} (blocklist includes "
                    f"{pattern!r})", tool=call.name, index=index, constraint=f"blocklist: {pattern}",
                ))
        headline = f"{len(violations)} blocked call(s)" if violations else "no blocked tool called"
        return self.score(0.0 if violations else 1.0, with_violations(headline, violations),
                          calls_found=len(violations), **violation_metadata(violations))
