"""``tool_argument_match``: each expected tool call was made with matching arguments (harness-evals'
ToolArgumentMatch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score, ToolCall
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import (
    argument_violations,
    arguments_of,
    show,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.base import BaseMetric

Problems = list[dict[str, Any]]


class ExpectedCall(ComponentConfig):
    name: str = Field(min_length=1, description="tool name (exact)")
    arguments: dict[str, Any] = Field(default_factory=dict, description="expected arguments")


class ToolArgumentMatchOptions(ComponentConfig):
    expected_calls: list[ExpectedCall] | None = Field(
        None, description="expected calls `[{name, arguments}]`; default: the case's `expected` when it is such a list"
    )
    mode: Literal["exact", "subset"] = Field(
        "exact", description="exact: the same argument keys and values; subset: expected keys present with equal "
        "values, other keys allowed",
    )
    ignore_keys: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="top-level argument keys left out of the comparison on both sides"
    )


class ToolArgumentMatchMetric(BaseMetric):
    """Share of the expected tool calls that were made with matching arguments.

    Reads ``tool_calls`` and the expected calls: the `expected_calls` option, else ``expected`` when it is a
    non-empty list of `{name, arguments}` dicts (or ToolCalls). An expected call matches an actual call with
    the same name whose arguments match: mode `exact` needs the same keys with equal values, mode `subset`
    needs the expected keys with equal values (other keys allowed). Keys in `ignore_keys` are dropped from both
    sides; values compare as JSON (`1 == 1.0`, `true != 1`, nested values whole). Each actual call matches at
    most one expected call, and the pairing is a maximum bipartite matching (so a lenient expected call never
    takes the only call a stricter one could use). Value = matched expected calls / expected calls; the order
    of calls is not checked (use `tool_call_order` for that).

    Each unmatched expected call gives violations: `missing_call` when no call has its name, else the
    differences of the closest same-name call as `argument_match` records `{tool, index, argument, value,
    expected, constraint}` (or `arguments_not_object`). Not applicable when there are no expected calls.
    """

    kind: ClassVar[str] = "tool_argument_match"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "tool_arguments", "expected")

    def required_fields(self) -> tuple[str, ...]:
        """With ``expected_calls`` configured no golden ``expected`` is needed."""
        configured = cast(ToolArgumentMatchOptions, self.options).expected_calls is not None
        return ("tool_calls", "tool_arguments") if configured else self.needs
    Options: ClassVar[type[ComponentConfig]] = ToolArgumentMatchOptions

    def setup(self) -> None:
        opts = cast(ToolArgumentMatchOptions, self.options)
        #: the configured expected calls as (name, arguments) pairs, built once (None: read from each case)
        self._configured = (None if opts.expected_calls is None
                            else [(call.name, call.arguments) for call in opts.expected_calls])
        self._ignore = frozenset(opts.ignore_keys)

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ToolArgumentMatchOptions, self.options)
        expected = self._configured if self._configured is not None else _expected_calls(eval_case.expected)
        if not expected:
            return None
        ignore = self._ignore
        calls = eval_case.tool_calls
        arguments = [arguments_of(call) for call in calls]

        def differences(want: tuple[str, dict[str, Any]], index: int) -> Problems:
            args = arguments[index]
            if args is None:
                return [violation("arguments_not_object", f"{want[0]} (index {index}): arguments are not a JSON "
                                  "object", tool=want[0], index=index, value=calls[index].arguments)]
            return argument_violations("argument_match", want[0], index, want[1], args, exact=opts.mode == "exact",
                                       ignore_keys=ignore)

        same_name = [[i for i, call in enumerate(calls) if call.name == name] for name, _ in expected]
        edges = [[i for i in candidates if not differences(want, i)]
                 for want, candidates in zip(expected, same_name, strict=True)]
        pairs = maximum_matching(edges)
        used = set(pairs.values())
        violations: Problems = []
        for position, (want, candidates) in enumerate(zip(expected, same_name, strict=True)):
            if position in pairs:
                continue
            if not candidates:
                violations.append(violation("missing_call", f"{want[0]}({show(want[1])}) was never called",
                                            tool=want[0], expected=want[1], position=position))
                continue
            free = [i for i in candidates if i not in used] or candidates
            closest: Problems = min((differences(want, i) for i in free), key=len)
            violations += closest
        matched = len(pairs)
        headline = f"{matched} of {len(expected)} expected call(s) matched ({opts.mode})"
        return self.score(matched / len(expected), with_violations(headline, violations), matched=matched,
                          expected=len(expected), mode=opts.mode, **violation_metadata(violations))


def maximum_matching(edges: list[list[int]]) -> dict[int, int]:
    """A maximum bipartite matching, left index -> right index (Kuhn's augmenting paths; ``edges[left]`` lists
    the right nodes it may take)."""
    owner: dict[int, int] = {}

    def assign(left: int, seen: set[int]) -> bool:
        for right in edges[left]:
            if right not in seen:
                seen.add(right)
                if right not in owner or assign(owner[right], seen):
                    owner[right] = left
                    return True
        return False

    for left in range(len(edges)):
        assign(left, set())
    return {left: right for right, left in owner.items()}


def _expected_calls(expected: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """``expected`` as ``(name, arguments)`` pairs when it is a list of call dicts or ToolCalls, else None."""
    if not isinstance(expected, (list, tuple)):
        return None
    out = []
    for item in expected:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            item = ToolCall(name=item["name"], arguments=item.get("arguments"))
        if not isinstance(item, ToolCall) or not item.name:
            return None
        args = arguments_of(item)
        if args is None:
            return None
        out.append((item.name, args))
    return out
