"""``args_valid``: every tool call's arguments satisfy a per-tool policy (Assay's ``args_valid``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, cast

from jsonschema.protocols import Validator
from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.arg_schemas import compile_schemas, schema_problems
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
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, (list, tuple)),
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
    policy: ArgsPolicy | None = Field(None, description="the policy inline (same shape as the file); a string is "
                                      "read as `policy_file` (Assay's `policy: <path>`)")
    tools: list[Glob] = Field(default_factory=list, description="only check calls to these tools (globs); empty: all")
    strict: bool = Field(False, description="a call to a tool the policy does not define is a violation")

    @model_validator(mode="before")
    @classmethod
    def _policy_path(cls, data: Any) -> Any:
        """Assay's test entries write ``policy: <path>``: a string ``policy`` is the policy file's path."""
        if isinstance(data, Mapping) and isinstance(data.get("policy"), str) and "policy_file" not in data:
            return {**{k: v for k, v in data.items() if k != "policy"}, "policy_file": data["policy"]}
        return data

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

    Assay's v2.0 policy files load unchanged (evald/metrics/agent/arg_schemas.py): `schemas:` maps a tool name
    to the JSON Schema of its arguments (validated with `jsonschema`; the draft is the schema's `$schema`, else
    2020-12; shared definitions under `schemas.$defs`, referenced as `#/schemas/$defs/...`; remote `$ref`s are
    refused at load), `tools: {allow: [...], deny: [...]}` filters tools by glob, and
    `enforcement.unconstrained_tools: deny` makes a call to a tool with neither a schema nor an argument policy a
    violation (`warn`, the default, and `allow` let it pass). `limits` and `signatures` are accepted and unused.
    A tool may have both an argument policy and a schema: both apply.

    A call is checked when its tool has a policy or a schema, breaks the allow/deny filter, or is unconstrained
    under `strict: true` or `unconstrained_tools: deny`, and, if `tools` is set, its name matches one of those
    globs. Value = valid checked calls / checked calls, and 1.0 when nothing is checked: the metric applies to
    every case, an empty trajectory included. Each problem is one violation `{rule, tool, index, argument, value,
    constraint, message}` with `rule` one of `unknown_tool`, `tool_denied`, `tool_not_allowed`,
    `arguments_not_object`, `required`, `type`, `min`, `max`, `pattern`, `enum`, `schema` (one per JSON Schema
    error: `argument` is the error's path, absent for the whole object; `constraint` is `<keyword>: <value>`).
    """

    kind: ClassVar[str] = "args_valid"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "tool_arguments")
    Options: ClassVar[type[ComponentConfig]] = ArgsValidOptions

    def setup(self) -> None:
        self._schemas = compile_schemas(cast(ArgsValidOptions, self.options).effective_policy().schemas)

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ArgsValidOptions, self.options)
        policy = opts.effective_policy()
        deny = policy.enforcement.unconstrained_tools == "deny"
        violations: list[dict[str, Any]] = []
        checked = valid = 0
        for index, call in enumerate(eval_case.tool_calls):
            if opts.tools and not matches_any(call.name, opts.tools):
                continue
            tool_policy, schema = policy.tools.get(call.name), self._schemas.get(call.name)
            problems = _filter_violations(call.name, index, policy)
            if tool_policy is None and schema is None and not problems:
                if not (opts.strict or deny):
                    continue
                problems = [violation("unknown_tool", f"{call.name} (index {index}): tool is not defined in the "
                                      "policy (" + ("strict" if opts.strict else "unconstrained_tools: deny") + ")",
                                      tool=call.name, index=index,
                                      constraint="strict" if opts.strict else "unconstrained_tools: deny")]
            if tool_policy is not None or schema is not None:
                arguments = arguments_of(call)
                if arguments is None:  # one violation, whether a policy, a schema or both constrain the tool
                    problems.append(violation("arguments_not_object", f"{call.name} (index {index}): arguments are "
                                              "not a JSON object", tool=call.name, index=index, value=call.arguments,
                                              constraint="type: object"))
                else:
                    if tool_policy is not None:
                        problems += _call_violations(call.name, index, tool_policy, arguments)
                    if schema is not None:
                        problems += _schema_violations(call.name, index, schema, arguments)
            checked += 1
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


def _filter_violations(tool: str, index: int, policy: ArgsPolicy) -> list[dict[str, Any]]:
    """Assay v2.0 tool filtering: a denied tool, or one outside a defined allow list."""
    flt = policy.tool_filter
    if flt is None:
        return []
    if matches_any(tool, flt.deny):
        return [violation("tool_denied", f"{tool} (index {index}): tool is denied by the policy", tool=tool,
                          index=index, constraint=f"deny: {', '.join(flt.deny)}")]
    if flt.allow is not None and not matches_any(tool, flt.allow):
        return [violation("tool_not_allowed", f"{tool} (index {index}): tool is not in the allow list", tool=tool,
                          index=index, constraint=f"allow: {', '.join(flt.allow)}")]
    return []


def _schema_violations(tool: str, index: int, schema: Validator, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``schema`` violation per JSON Schema error (Assay's ``E_ARG_SCHEMA``)."""
    where = f"{tool} (index {index})"
    out = []
    for argument, value, constraint, message in schema_problems(schema, arguments):
        fields = {"argument": argument} if argument is not None else {}
        out.append(violation("schema", f"{where}: {argument or 'arguments'}: {message}", tool=tool, index=index,
                             **fields, value=value, constraint=constraint))
    return out


def _call_violations(tool: str, index: int, policy: ToolPolicy, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    where = f"{tool} (index {index})"
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
