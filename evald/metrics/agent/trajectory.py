"""Shared parts of the agent (trajectory) metrics: glob matching, Assay-style violation records, trajectory
helpers (names, arguments, alignment) and the ``args_valid`` argument-policy model.

The trajectory is ``EvalCase.tool_calls`` in call order; ``index`` always means a call's 0-based position in it.
Violations follow Assay's structured output: one dict per violation with ``rule`` and, as they apply, ``tool``,
``index``, ``argument``, ``value`` (what the trace holds), ``expected``, ``constraint`` (the policy clause, e.g.
``"max: 30"``) and a human ``message``. A score carries at most ``MAX_VIOLATIONS`` of them in
``metadata["violations"]`` and the total in ``metadata["violation_count"]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeVar

import yaml
from pydantic import BeforeValidator, Field, model_validator

from evald.case import EvalCase, ToolCall
from evald.config.base import ComponentConfig
from evald.metrics.agent.arg_schemas import Enforcement, ToolFilter, check_schemas
from evald.metrics.deterministic.json_values import json_equal
from evald.metrics.options import Pattern

MAX_VIOLATIONS = 20
_MAX_VALUE_CHARS = 200
_MAX_SHOWN_CHARS = 60
_REASON_LISTED = 3

# -- glob patterns --------------------------------------------------------------------------------------------


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


#: A tool-name glob (``fnmatch`` syntax: ``*``, ``?``, ``[seq]``).
Glob = Annotated[str, Field(min_length=1)]
#: One glob or a non-empty list of globs (a single string is accepted for one).
GlobList = Annotated[list[Glob], BeforeValidator(_one_or_many), Field(min_length=1)]


def matches(name: str, pattern: str) -> bool:
    """Whether a tool name matches a glob: stdlib ``fnmatch.fnmatchcase`` (case-sensitive, as tool names are)."""
    return fnmatchcase(name, pattern)


def matches_any(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def tool_names(eval_case: EvalCase) -> list[str]:
    """The trajectory as tool names, in call order."""
    return [call.name for call in eval_case.tool_calls]


def show_globs(patterns: Sequence[str]) -> str:
    return " or ".join(repr(p) for p in patterns)


# -- violation records ----------------------------------------------------------------------------------------


def clip(value: Any, limit: int = _MAX_VALUE_CHARS) -> Any:
    """A trace value kept small: a long string, or a container whose JSON is long, becomes a shortened text."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, (Mapping, list, tuple)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return value if len(text) <= limit else text[:limit] + "…"
    return value


def show(value: Any) -> str:
    """A value for a human message: its JSON text, shortened."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_SHOWN_CHARS else text[:_MAX_SHOWN_CHARS] + "…"


def violation(rule: str, message: str, **fields: Any) -> dict[str, Any]:
    """One violation record: ``rule``, the given fields (``value``/``expected`` clipped) and ``message``."""
    record: dict[str, Any] = {"rule": rule}
    record.update({key: clip(value) if key in ("value", "expected") else value for key, value in fields.items()})
    record["message"] = message
    return record


def violation_metadata(violations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``violations`` (at most ``MAX_VIOLATIONS``) and ``violation_count`` (all of them) for ``Score.metadata``."""
    return {"violations": list(violations[:MAX_VIOLATIONS]), "violation_count": len(violations)}


def with_violations(headline: str, violations: Sequence[dict[str, Any]]) -> str:
    """A reason: the headline, then the first few violation messages."""
    if not violations:
        return headline
    listed = "; ".join(v["message"] for v in violations[:_REASON_LISTED])
    more = f"; and {len(violations) - _REASON_LISTED} more" if len(violations) > _REASON_LISTED else ""
    return f"{headline}: {listed}{more}"


# -- arguments ------------------------------------------------------------------------------------------------


def arguments_of(call: ToolCall) -> dict[str, Any] | None:
    """A call's arguments as a dict: none (or an empty string) is ``{}``, a JSON object text is parsed, anything
    else (a list, a scalar, text that is not a JSON object) is ``None``."""
    args = call.arguments
    if args is None:
        return {}
    if isinstance(args, str):
        if not args.strip():
            return {}
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return {str(k): v for k, v in args.items()} if isinstance(args, Mapping) else None


def argument_violations(
    rule: str, tool: str, index: int, expected: Mapping[str, Any], actual: Mapping[str, Any], *,
    exact: bool = False, ignore_keys: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """How a call's arguments differ from the expected ones: each expected key must be present with an equal value
    (``json_equal``); with ``exact``, no other key may be present. Keys in ``ignore_keys`` are skipped."""
    where = f"{tool} (index {index})"
    out = []
    for key, want in expected.items():
        if key in ignore_keys:
            continue
        if key not in actual:
            out.append(violation(rule, f"{where}: argument {key!r} is missing (expected {show(want)})", tool=tool,
                                 index=index, argument=key, expected=want, constraint="required"))
        elif not json_equal(actual[key], want):
            out.append(violation(rule, f"{where}: {key} = {show(actual[key])}, expected {show(want)}", tool=tool,
                                 index=index, argument=key, value=actual[key], expected=want, constraint="equals"))
    if exact:
        for key in sorted(set(actual) - set(expected) - ignore_keys):
            out.append(violation(rule, f"{where}: unexpected argument {key!r} = {show(actual[key])}", tool=tool,
                                 index=index, argument=key, value=actual[key], constraint="exact"))
    return out


# -- alignment ------------------------------------------------------------------------------------------------

_Left = TypeVar("_Left")


def align(left: Sequence[_Left], right: Sequence[str], same: Callable[[_Left, str], bool]) -> list[tuple[int, int]]:
    """A longest common subsequence of two sequences under ``same``, as matched ``(left, right)`` index pairs in
    order (the classic O(len·len) dynamic programme)."""
    rows, cols = len(left), len(right)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if same(left[i], right[j])
                           else max(table[i + 1][j], table[i][j + 1]))
    pairs, i, j = [], 0, 0
    while i < rows and j < cols:
        if same(left[i], right[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


# -- the args_valid policy model ------------------------------------------------------------------------------

ArgumentType = Literal["string", "integer", "number", "boolean", "array", "object"]


class ArgumentRule(ComponentConfig):
    """Constraints on one argument (Assay's policy vocabulary)."""

    type: ArgumentType | None = Field(None, description="JSON type the value must have")
    required: bool = Field(False, description="the argument must be present")
    min: float | None = Field(None, description="smallest allowed number (integer/number arguments)")
    max: float | None = Field(None, description="largest allowed number (integer/number arguments)")
    pattern: Pattern | None = Field(None, description="regular expression the string must contain (re.search)")
    enum: list[Any] | None = Field(None, min_length=1, description="the allowed values")

    @model_validator(mode="after")
    def _constraints_fit_the_type(self) -> Self:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        if (self.min is not None or self.max is not None) and self.type not in (None, "integer", "number"):
            raise ValueError(f"min/max apply to numbers, not to type {self.type!r}")
        if self.pattern is not None and self.type not in (None, "string"):
            raise ValueError(f"pattern applies to strings, not to type {self.type!r}")
        return self


class ToolPolicy(ComponentConfig):
    """The argument policy of one tool."""

    description: str | None = Field(None, description="free text")
    required: list[str] = Field(default_factory=list, description="arguments that must be present")
    arguments: dict[str, ArgumentRule] = Field(default_factory=dict, description="constraints per argument")


class ArgsPolicy(ComponentConfig):
    """An ``args_valid`` policy: ``tools: {<tool name>: {required: [...], arguments: {<arg>: {...}}}}`` and/or
    Assay's v2.0 form: ``schemas: {<tool name>: <JSON Schema>}``, ``tools: {allow: [...], deny: [...]}``,
    ``enforcement: {unconstrained_tools: warn|deny|allow}`` (evald/metrics/agent/arg_schemas.py)."""

    version: str | int | float | None = Field(None, description="free-form policy version")
    name: str | None = Field(None, description="free-form policy name")
    description: str | None = Field(None, description="free text")
    tools: dict[str, ToolPolicy] = Field(default_factory=dict, description="policy per tool name (exact names)")
    tool_filter: ToolFilter | None = Field(
        None, description="Assay v2.0's `tools: {allow: [...], deny: [...]}` (globs), read from `tools` when it holds "
        "only those keys with lists",
    )
    schemas: dict[str, Any] = Field(
        default_factory=dict, description="tool name -> JSON Schema of its arguments (`$defs`: shared definitions, "
        "referenced as `#/schemas/$defs/...`)",
    )
    enforcement: Enforcement = Field(default_factory=Enforcement, description="Assay v2.0 enforcement")
    limits: dict[str, Any] | None = Field(None, description="Assay v2.0 rate limits: accepted, not used per case")
    signatures: dict[str, Any] | None = Field(None, description="Assay v2.0 signature checks: accepted, not used")
    sequences: list[Any] | None = Field(None, description="Assay's sequence rules in a shared policy file: read by "
                                        "`sequence_valid`, not here")
    aliases: dict[str, Any] | None = Field(None, description="Assay's tool aliases: read by `sequence_valid`")

    @model_validator(mode="before")
    @classmethod
    def _assay_tool_filter(cls, data: Any) -> Any:
        tools = data.get("tools") if isinstance(data, Mapping) else None
        if (isinstance(tools, Mapping) and tools and set(tools) <= {"allow", "deny"}
                and all(isinstance(v, (list, str)) for v in tools.values())):
            return {**{k: v for k, v in data.items() if k != "tools"}, "tool_filter": tools}
        return data

    @model_validator(mode="after")
    def _something_to_check(self) -> Self:
        if not self.tools and not self.schemas and self.tool_filter is None:
            raise ValueError("a policy needs `tools` (per-tool argument policies, or allow/deny) or `schemas`")
        check_schemas(self.schemas)
        return self


def read_policy_yaml(path: str, holds: str) -> dict[str, Any]:
    """The mapping a YAML policy file holds (``holds`` names the keys expected, for the error message); a
    ``ValueError`` naming the file and, for bad YAML, the line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"cannot read policy file {path!r}: {err.strerror or err}") from err
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"policy file {path!r} is not valid YAML{where}") from err
    if not isinstance(raw, dict):
        raise ValueError(f"policy file {path!r} must hold a mapping with {holds}")
    return raw


def _read_policy_file(value: Any) -> Any:
    """``policy_file: <path>`` -> the file's YAML content, validated as ``PolicyFile`` right after."""
    if isinstance(value, PolicyFile):
        return value
    if not isinstance(value, str) or not value:
        raise ValueError("expected the path of a YAML policy file")
    return {**read_policy_yaml(value, "a 'tools' or 'schemas' key"), "loaded_from": value}


class PolicyFile(ArgsPolicy):
    """A policy read from a YAML file (relative paths are relative to evald's working directory)."""

    loaded_from: str = Field(description="the policy file's path")


#: ``policy_file`` option: a path in config, a validated ``PolicyFile`` once loaded (errors name the file's keys).
PolicyFilePath = Annotated[PolicyFile, BeforeValidator(_read_policy_file)]
