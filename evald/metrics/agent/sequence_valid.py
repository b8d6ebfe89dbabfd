"""``sequence_valid``: the tool calls follow ordering and presence rules (Assay's ``sequence_valid``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.sequence_policy import load_rules
from evald.metrics.agent.temporal_rules import AfterRule, EventuallyRule, NeverAfterRule, SequenceRule
from evald.metrics.agent.trajectory import (
    GlobList,
    matches_any,
    show_globs,
    tool_names,
    violation,
    violation_metadata,
    with_violations,
)
from evald.metrics.base import BaseMetric

Problems = list[dict[str, Any]]


class RequireRule(ComponentConfig):
    type: Literal["require"] = Field(description="the tool must be called at least once")
    tool: GlobList = Field(description="tool glob(s)")

    def check(self, names: list[str]) -> Problems:
        if any(matches_any(name, self.tool) for name in names):
            return []
        return [violation("require", f"require: expected {show_globs(self.tool)} to be called, it was never called",
                          tool=", ".join(self.tool), constraint=f"require: {', '.join(self.tool)}")]


class BeforeRule(ComponentConfig):
    type: Literal["before"] = Field(description="a `first` call precedes the earliest `then` call")
    first: GlobList = Field(description="tool glob(s) that must come first")
    then: GlobList = Field(description="tool glob(s) that may only come after a `first` call")

    def check(self, names: list[str]) -> Problems:
        constraint = f"before: {show_globs(self.first)} before {show_globs(self.then)}"
        first_at = next((i for i, name in enumerate(names) if matches_any(name, self.first)), len(names))
        prior = "it was never called" if first_at == len(names) else f"first called at index {first_at}"
        return [
            violation("before", f"before: {name} called at index {i} without a prior {show_globs(self.first)} "
                      f"({prior})", tool=name, index=i, constraint=constraint)
            for i, name in enumerate(names[:first_at]) if matches_any(name, self.then)
        ]


class ImmediatelyBeforeRule(ComponentConfig):
    type: Literal["immediately_before"] = Field(description="every `then` call directly follows a `first` call")
    first: GlobList = Field(description="tool glob(s) that must come directly before")
    then: GlobList = Field(description="tool glob(s) that must directly follow a `first` call")

    def check(self, names: list[str]) -> Problems:
        constraint = f"immediately_before: {show_globs(self.first)} directly before {show_globs(self.then)}"
        out = []
        for i, name in enumerate(names):
            if matches_any(name, self.then) and (i == 0 or not matches_any(names[i - 1], self.first)):
                previous = "it is the first call" if i == 0 else f"previous call: {names[i - 1]}"
                out.append(violation("immediately_before", f"immediately_before: {name} called at index {i} without "
                                     f"{show_globs(self.first)} directly before it ({previous})", tool=name, index=i,
                                     constraint=constraint))
        return out


class BlocklistRule(ComponentConfig):
    type: Literal["blocklist"] = Field(description="these tools must never be called")
    tools: GlobList | None = Field(None, description="blocked tool globs")
    pattern: str | None = Field(None, min_length=1, description="Assay's form: a tool whose name contains this text "
                                "is blocked")

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.tools is None) == (self.pattern is None):
            raise ValueError("a blocklist rule needs exactly one of `tools` and `pattern`")
        return self

    def check(self, names: list[str]) -> Problems:
        if self.pattern is not None:
            pattern = self.pattern
            return [violation("blocklist", f"blocklist: tool {name} at index {i} contains {pattern!r}", tool=name,
                              index=i, constraint=f"blocklist: *{pattern}*")
                    for i, name in enumerate(names) if pattern in name]
        tools = self.tools or []
        return [violation("blocklist", f"blocklist: blocked tool {name} called at index {i}", tool=name, index=i,
                          constraint=f"blocklist: {', '.join(tools)}")
                for i, name in enumerate(names) if matches_any(name, tools)]


class AllowlistRule(ComponentConfig):
    type: Literal["allowlist"] = Field(description="only these tools may be called")
    tools: GlobList = Field(description="allowed tool globs")

    def check(self, names: list[str]) -> Problems:
        return [violation("allowlist", f"allowlist: {name} called at index {i} is not allowed", tool=name, index=i,
                          constraint=f"allowlist: {', '.join(self.tools)}")
                for i, name in enumerate(names) if not matches_any(name, self.tools)]


class CountRule(ComponentConfig):
    type: Literal["count", "max_calls"] = Field(description="bounds on how often a tool is called (`max_calls`: "
                                                "Assay's newer name)")
    tool: GlobList = Field(description="tool glob(s)")
    min: int = Field(0, ge=0, description="fewest calls allowed")
    max: int | None = Field(None, ge=0, description="most calls allowed")

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        if self.max is None and self.min == 0:
            raise ValueError("a count rule needs `min` or `max`")
        if self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self

    def check(self, names: list[str]) -> Problems:
        at = [i for i, name in enumerate(names) if matches_any(name, self.tool)]
        bounds = f"min {self.min}" + ("" if self.max is None else f", max {self.max}")
        tool, shown = ", ".join(self.tool), show_globs(self.tool)
        constraint = f"count: {tool} {bounds}"
        if len(at) < self.min:
            return [violation("count", f"count: {shown} called {len(at)} time(s), expected at least "
                              f"{self.min}", tool=tool, value=len(at), constraint=constraint)]
        if self.max is not None and len(at) > self.max:
            return [violation("count", f"count: {shown} called {len(at)} time(s), expected at most "
                              f"{self.max} (call {self.max + 1} at index {at[self.max]})", tool=tool,
                              index=at[self.max], value=len(at), constraint=constraint)]
        return []


Rule = Annotated[
    RequireRule | BeforeRule | ImmediatelyBeforeRule | BlocklistRule | AllowlistRule | CountRule | EventuallyRule
    | AfterRule | NeverAfterRule | SequenceRule,
    Field(discriminator="type"),
]


class SequenceValidOptions(ComponentConfig):
    rules: list[Rule] = Field(
        min_length=1, description="rules, each with a `type`: require, before, immediately_before, blocklist, "
        "allowlist, count (or max_calls), eventually, after, never_after, sequence (see the metric's description); "
        "checked after a policy file's",
    )
    aliases: dict[str, GlobList] = Field(
        default_factory=dict, description="Assay's aliases: a name that stands for these tools wherever a rule names "
        "a tool",
    )
    policy_file: str | None = Field(
        None, description="an Assay policy file: its `sequences` (rules) and `aliases` are read when the config loads "
        "(its other keys are `args_valid`'s)",
    )

    @model_validator(mode="before")
    @classmethod
    def _policy_and_aliases(cls, data: Any) -> Any:
        return load_rules(data) if isinstance(data, Mapping) else data


class SequenceValidMetric(BaseMetric):
    """Whether the tool calls follow every ordering and presence rule (Assay's ``sequence_valid``).

    Reads ``tool_calls`` (their names, in call order). Rules, all with glob patterns (`fnmatch`):

    - `require` (`tool`): at least one matching call.
    - `before` (`first`, `then`): some `first` call comes before the earliest `then` call; a trajectory with
      no `then` call satisfies it. Each `then` call made before any `first` call is a violation.
    - `immediately_before` (`first`, `then`): every `then` call is directly preceded by a `first` call.
    - `blocklist` (`tools`): no call matches. `allowlist` (`tools`): every call matches.
    - `count` (`tool`, `min`, `max`; also spelled `max_calls`): the number of matching calls is within bounds.

    Assay's temporal rules (its Policy DSL v1.1; evald/metrics/agent/temporal_rules.py), for a complete trace:

    - `eventually` (`tool`, `within`): a matching call among the first `within` calls.
    - `after` (`trigger`, `then`, `within`): a `trigger` call is followed by a `then` call at most `within` calls
      later; a later trigger call resets a pending deadline (Assay's reading); the trace ending first fails.
    - `never_after` (`trigger`, `forbidden`): no `forbidden` call after the first `trigger` call (each is a
      violation; before it they are fine).
    - `sequence` (`tools`, `strict`): the steps are called in order; a call of a later step while an earlier one
      is expected is a violation, and with `strict: true` any other call between the started steps is. A trace
      calling none of the steps holds; one that starts the sequence and stops part-way fails.

    Assay's files load unchanged (evald/metrics/agent/sequence_policy.py): `policy_file` reads an Assay policy's
    `sequences` and `aliases`; `aliases` (name -> tools) stand for their members wherever a rule names a tool;
    `blocklist` also takes Assay's `pattern` (blocks tools whose name contains the text); `max_calls` is `count`.

    Tool fields take one glob or a list. Rules combine with AND: value = satisfied rules /
    rules, and with the default threshold 1.0 the case passes only when every rule holds. Each violation names
    its `rule` (type) and `rule_index`, the offending `tool` and `index` where there is one, the `constraint`
    and a message. Applies to every case; on an empty trajectory `require`, `count` with `min`, and `eventually`
    fail, the other rules hold.
    """

    kind: ClassVar[str] = "sequence_valid"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ("tool_calls",)
    Options: ClassVar[type[ComponentConfig]] = SequenceValidOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(SequenceValidOptions, self.options)
        names = tool_names(eval_case)
        violations: Problems = []
        satisfied = 0
        for rule_index, rule in enumerate(opts.rules):
            problems = rule.check(names)
            satisfied += not problems
            violations += [{"rule": v["rule"], "rule_index": rule_index, **v} for v in problems]
        total = len(opts.rules)
        headline = f"{satisfied} of {total} rule(s) satisfied"
        return self.score(satisfied / total, with_violations(headline, violations), rules_checked=total,
                          rules_satisfied=satisfied, **violation_metadata(violations))
