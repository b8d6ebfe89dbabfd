"""``mcp_trace_completeness``: the share of the expected MCP operations found among the case's tool calls."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import arguments_of
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import json_equal


class ExpectedOperation(ComponentConfig):
    name: str = Field(min_length=1, description="tool name (exact)")
    arguments: dict[str, Any] | None = Field(
        None, description="expected arguments (compared whole, as JSON); null: any arguments"
    )


class MCPTraceCompletenessOptions(ComponentConfig):
    expected_trace: list[ExpectedOperation] | None = Field(
        None, description="expected operations `[{name, arguments}]`; default: the case's `expected` when it is "
        "such a list, else its `expected_tools` (names only)",
    )


class MCPTraceCompletenessMetric(BaseMetric):
    """The share of the expected MCP operations that were executed: found / expected.

    harness-evals' MCPTraceCompleteness: each expected entry is matched to at most one actual tool call (in order,
    the first unused call that matches), a match being the same tool name and equal arguments (JSON equality of
    the whole argument object; an entry without ``arguments`` matches any arguments, which is how
    ``expected_tools`` names are used). Actual calls are the case's ``tool_calls``, which include MCP
    ``tools/call`` spans (evald/mapping/mcp.py). Example: expected [search{q: a}, fetch{id: 1}], called
    [search{q: a}, fetch{id: 2}]: 1/2. Metadata: ``found``, ``total_expected``, ``missing`` (the unmatched
    entries). No expected entries at all scores 1 (nothing to check), as in harness-evals.

    Not applicable when neither the option, ``expected`` nor ``expected_tools`` gives expected operations.
    """

    kind: ClassVar[str] = "mcp_trace_completeness"
    family: ClassVar[str] = "mcp"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected", "expected_tools")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "expected|expected_tools")

    def required_fields(self) -> tuple[str, ...]:
        configured = cast(MCPTraceCompletenessOptions, self.options).expected_trace is not None
        return ("tool_calls",) if configured else self.needs

    Options: ClassVar[type[ComponentConfig]] = MCPTraceCompletenessOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        expected = self._expected(eval_case)
        if expected is None:
            return None
        if not expected:
            return self.score(1.0, "no expected operations: nothing to check", found=0, total_expected=0, missing=[])
        used = [False] * len(eval_case.tool_calls)
        missing: list[dict[str, Any]] = []
        for name, args in expected:
            for i, call in enumerate(eval_case.tool_calls):
                if used[i] or call.name != name:
                    continue
                if args is None or json_equal(arguments_of(call), args):
                    used[i] = True
                    break
            else:
                missing.append({"name": name, "arguments": args})
        found = len(expected) - len(missing)
        return self.score(found / len(expected), f"{found} of {len(expected)} expected operations executed",
                          found=found, total_expected=len(expected), missing=missing)

    def _expected(self, eval_case: EvalCase) -> list[tuple[str, dict[str, Any] | None]] | None:
        configured = cast(MCPTraceCompletenessOptions, self.options).expected_trace
        if configured is not None:
            return [(op.name, op.arguments) for op in configured]
        exp = eval_case.expected
        if isinstance(exp, (list, tuple)) and exp and all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                         for e in exp):
            out: list[tuple[str, dict[str, Any] | None]] = []
            for item in exp:
                args = item.get("arguments", item.get("input"))
                out.append((item["name"], dict(args) if isinstance(args, dict) else None))
            return out
        if eval_case.expected_tools is not None:
            return [(name, None) for name in eval_case.expected_tools]
        return None
