"""``error_free``: no LLM call or tool call of the case ended in an error."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension, EvalCase, Score
from evald.metrics.base import BaseMetric

_MAX_LISTED = 5


class ErrorFreeMetric(BaseMetric):
    """Whether the case finished without errors (1 or 0).

    Reads ``error`` (set by the mapper when an inference span has an ERROR status or an ``error.type``
    attribute; for a trace, when any of its LLM calls did) and ``tool_calls`` (a tool call whose
    ``execute_tool`` span failed has ``error`` set). The reason names the failed span or tools.

    Always applicable: every case carries an error status, so the metric never returns ``None``.
    """

    kind: ClassVar[str] = "error_free"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("error", "tool_calls")
    needs: ClassVar[tuple[str, ...]] = ()

    def measure(self, eval_case: EvalCase) -> Score | None:
        failed_tools = [call.name or call.id or "<unnamed>" for call in eval_case.tool_calls if call.error]
        problems = []
        if eval_case.error:
            if eval_case.scope == "llm_call":
                problems.append(f"LLM call span {eval_case.span_id or '<unknown>'} ended in error")
            else:
                problems.append(f"an LLM call in trace {eval_case.trace_id or '<unknown>'} ended in error")
        if failed_tools:
            listed = ", ".join(repr(name) for name in failed_tools[:_MAX_LISTED])
            more = f" and {len(failed_tools) - _MAX_LISTED} more" if len(failed_tools) > _MAX_LISTED else ""
            problems.append(f"{len(failed_tools)} tool call(s) failed: {listed}{more}")
        metadata = {"llm_error": eval_case.error, "failed_tool_calls": len(failed_tools)}
        if problems:
            return self.score(0.0, "; ".join(problems), **metadata)
        return self.score(1.0, "no errors", **metadata)
