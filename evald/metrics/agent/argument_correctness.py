"""``argument_correctness``: how correct each tool call's arguments are against the expected calls (deterministic)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score, ToolCall
from evald.config.base import ComponentConfig
from evald.metrics.agent.tool_argument_match import ExpectedCall
from evald.metrics.agent.trajectory import arguments_of
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import json_equal


class ArgumentCorrectnessOptions(ComponentConfig):
    expected_calls: list[ExpectedCall] | None = Field(
        None, description="expected calls `[{name, arguments}]`; default: the case's `expected` when it is such a list"
    )
    mode: Literal["exact", "subset"] = Field(
        "exact", description="exact: extra argument keys count against a call; subset: only expected keys count"
    )
    ignore_keys: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="top-level argument keys left out on both sides"
    )


class ArgumentCorrectnessMetric(BaseMetric):
    """Mean per-call argument correctness of the calls made to expected tools (partial credit per key).

    harness-evals' ArgumentCorrectness asks an LLM whether each call's arguments are correct, complete and free of
    extraneous keys. This deterministic version answers the same three questions against expected calls (option
    ``expected_calls``, else ``expected`` when it is a list of ``{name, arguments}``): each actual call whose tool
    has expected calls is scored against the best of them as ``correct keys / |expected keys ∪ actual keys|``
    (mode ``exact``: a missing key, a wrong value and an extraneous key each cost one share) or
    ``correct keys / |expected keys|`` (mode ``subset``); a call with no arguments against an expected call
    with none scores 1. Value = mean over those calls. Calls to tools without an expected call are left out
    (tool choice is ``tool_selection_accuracy``'s question). Example: expected search{q: "x", k: 5}, called
    search{q: "x", k: 3, lang: "en"}: exact 1/3, subset 1/2. Where ``tool_argument_match`` gives each expected
    call 1 or 0, this gives each actual call partial credit.

    Not applicable when there are no expected calls, or no call was made to an expected tool.
    """

    kind: ClassVar[str] = "argument_correctness"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "tool_arguments", "expected")
    Options: ClassVar[type[ComponentConfig]] = ArgumentCorrectnessOptions

    def required_fields(self) -> tuple[str, ...]:
        configured = cast(ArgumentCorrectnessOptions, self.options).expected_calls is not None
        return ("tool_calls", "tool_arguments") if configured else self.needs

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ArgumentCorrectnessOptions, self.options)
        if opts.expected_calls is not None:
            expected = [(c.name, dict(c.arguments)) for c in opts.expected_calls]
        else:
            expected = _expected_calls(eval_case.expected)
        if not expected:
            return None
        ignored = frozenset(opts.ignore_keys)
        by_tool: dict[str, list[dict[str, Any]]] = {}
        for name, args in expected:
            by_tool.setdefault(name, []).append({k: v for k, v in args.items() if k not in ignored})
        per_call: list[dict[str, Any]] = []
        for index, call in enumerate(eval_case.tool_calls):
            if call.name not in by_tool:
                continue
            actual = arguments_of(call)
            if actual is None:
                per_call.append({"tool": call.name, "index": index, "value": 0.0, "problem": "arguments_not_object"})
                continue
            actual = {k: v for k, v in actual.items() if k not in ignored}
            value = max(_call_value(want, actual, opts.mode) for want in by_tool[call.name])
            per_call.append({"tool": call.name, "index": index, "value": value})
        if not per_call:
            return None
        mean = sum(c["value"] for c in per_call) / len(per_call)
        return self.score(mean, f"mean argument correctness {mean:.3f} over {len(per_call)} call(s) ({opts.mode})",
                          calls=per_call, mode=opts.mode)


def _call_value(want: Mapping[str, Any], actual: Mapping[str, Any], mode: str) -> float:
    correct = sum(1 for k, v in want.items() if k in actual and json_equal(actual[k], v))
    keys = set(want) | set(actual) if mode == "exact" else set(want)
    return correct / len(keys) if keys else 1.0


def _expected_calls(expected: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(expected, (list, tuple)):
        return []
    out = []
    for item in expected:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            item = ToolCall(name=item["name"], arguments=item.get("arguments"))
        if not isinstance(item, ToolCall) or not item.name:
            return []
        args = arguments_of(item)
        if args is None:
            return []
        out.append((item.name, args))
    return out
