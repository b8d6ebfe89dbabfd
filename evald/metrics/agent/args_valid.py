"""``args_valid``: every tool call's arguments satisfy a per-tool policy (Assay's ``args_valid``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import (
    ArgsPolicy,
    ArgumentRule,
    Glob,
    PolicyFilePath,
    ToolPolicy,
    arguments_of,
    matches_any,
    show,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import json_equal

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list | tuple),
    "object": lambda v: isinstance(v, Mapping),
}

_JSON_TYPES: tuple[tuple[Any, str], ...] = (
    (type(None), "null"), (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    ((list, tuple), "array"), (Mapping, "object"),
)


class ArgsValidOptions(ComponentConfig):
    policy_file: PolicyFilePath | None = Field(
        None, description="path of a YAML policy file, read and validated when the config loads (relative paths "
        "are relative to evald's working directory); exclusive with `policy`",
    )
    policy: ArgsPolicy | None = Field(None, description="the policy inline (same shape as the file)")
    tools: list[Glob] = Field(default_factory=list, description="only check calls to these tools (globs); empty: all")
    strict: bool = Field(False, description="a call to a tool the policy does not define is a violation")

    @model_validator(mode="after")
    def _exactly_one_policy(self) -> Self:
        if (self.policy is None) == (self.policy_file is None):
            raise ValueError("set exactly one of `policy` and `policy_file`")
        return self

    def effective_policy(self) -> ArgsPolicy:
        policy = self.policy or self.policy_file
        assert policy is not None  # guaranteed by _exactly_one_policy
        return policy


class ArgsValidMetric(BaseMetric):
    """Whether every tool call's arguments satisfy a per-tool policy (Assay's ``args_valid``).

    Reads ``tool_calls``. The policy (``policy_file``, or ``policy`` inline) maps exact tool names to the
    arguments they require and the constraints on each argument:

        tools:
          apply_discount:
            required: [order_id]
            arguments:
              percent: {type: number, min: 0, max: 30}
              order_id: {type: string, pattern: "^ord_[0-9]+$"}
              currency: {enum: [EUR, USD], required: true}

    Types are `string`, `integer` (whole numbers, `5.0` included), `number`, `boolean`, `array` and `object`;
    `min`/`max` bound numbers; `pattern` is searched in strings (`re.search`: anchor it with `^...$`); `enum`
    lists the allowed values. A bad policy (unknown key, wrong type, invalid regex, `min` above `max`) is a
    config error that names the key. Arguments the policy does not mention are allowed.

    A call is checked when its tool is in the policy (with `strict: true`, every call: one to an unknown tool
    is a violation) and, if `tools` is set, its name matches one of those globs. Value = valid checked calls /
    checked calls, and 1.0 when nothing is checked: the metric applies to every case, an empty trajectory
    included. Each problem is one violation `{rule, tool, index, argument, value, constraint, message}` with
    `rule` one of `unknown_tool`, `arguments_not_object`, `required`, `type`, `min`, `max`, `pattern`, `enum`.
    """

    kind: ClassVar[str] = "args_valid"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "tool_arguments")
    Options: ClassVar[type[ComponentConfig]] = ArgsValidOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ArgsValidOptions, self.options)
        policy = opts.effective_policy()
        violations: list[dict[str, Any]] = []
        checked = valid = 0
        for index, call in enumerate(eval_case.tool_calls):
            if opts.tools and not matches_any(call.name, opts.tools):
                continue
            tool_policy = policy.tools.get(call.name)
            if tool_policy is None and not opts.strict:
                continue
            checked += 1
            if tool_policy is None:
                problems = [violation("unknown_tool", f"{call.name} (index {index}): tool is not defined in the "
                                      "policy (strict)", tool=call.name, index=index, constraint="strict")]
            else:
                problems = _call_violations(call.name, index, tool_policy, arguments_of(call), call.arguments)
            valid += not problems
            violations += problems
        value = valid / checked if checked else 1.0
        if not checked:
            headline = "no tool call to check"
        elif valid == checked:
            headline = f"all {checked} checked call(s) valid"
        else:
            headline = f"{checked - valid} of {checked} checked call(s) invalid"
        return self.score(value, with_violations(headline, violations), calls_checked=checked, calls_valid=valid,
                          **violation_metadata(violations))


def _call_violations(tool: str, index: int, policy: ToolPolicy, arguments: dict[str, Any] | None, raw: Any
                     ) -> list[dict[str, Any]]:
    where = f"{tool} (index {index})"
    if arguments is None:
        return [violation("arguments_not_object", f"{where}: arguments are not a JSON object", tool=tool,
                          index=index, value=raw, constraint="type: object")]
    out = []
    required = [*policy.required, *(name for name, rule in policy.arguments.items() if rule.required)]
    for name in dict.fromkeys(required):
        if name not in arguments:
            out.append(violation("required", f"{where}: {name} (not provided): Missing required argument",
                                 tool=tool, index=index, argument=name, constraint="required"))
    for name, rule in policy.arguments.items():
        if name not in arguments:
            continue
        value = arguments[name]
        for kind, constraint, problem in _argument_problems(rule, value):
            out.append(violation(kind, f"{where}: {name} = {show(value)}: {problem}", tool=tool, index=index,
                                 argument=name, value=value, constraint=constraint))
    return out


def _argument_problems(rule: ArgumentRule, value: Any) -> list[tuple[str, str, str]]:
    """(rule, constraint, message) for each constraint the value breaks; a wrong type stops further checks."""
    if rule.type is not None and not _TYPE_CHECKS[rule.type](value):
        return [("type", f"type: {rule.type}", f"Expected {rule.type}, got {_json_type(value)}")]
    problems = []
    if rule.min is not None or rule.max is not None:
        if not _TYPE_CHECKS["number"](value):
            problems.append(("type", "type: number", f"Expected number, got {_json_type(value)}"))
        elif rule.min is not None and value < rule.min:
            problems.append(("min", f"min: {rule.min:g}", f"Value is below minimum (min: {rule.min:g})"))
        elif rule.max is not None and value > rule.max:
            problems.append(("max", f"max: {rule.max:g}", f"Value exceeds maximum (max: {rule.max:g})"))
    if rule.pattern is not None:
        if not isinstance(value, str):
            problems.append(("type", "type: string", f"Expected string, got {_json_type(value)}"))
        elif re.search(rule.pattern, value) is None:
            problems.append(("pattern", f"pattern: {rule.pattern}", f"Value does not match pattern {rule.pattern}"))
    if rule.enum is not None and not any(json_equal(value, allowed) for allowed in rule.enum):
        problems.append(("enum", f"enum: {show(rule.enum)}", f"Value is not one of {show(rule.enum)}"))
    return problems


def _json_type(value: Any) -> str:
    """The JSON type name of a value, for messages (bool before int: ``True`` is a boolean)."""
    return next((name for types, name in _JSON_TYPES if isinstance(value, types)), type(value).__name__)
