"""``tool_correctness``: the tools called match the expected tools (harness-evals' ToolCorrectness)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import align, tool_names, violation, violation_metadata, with_violations
from evald.metrics.base import BaseMetric

Problems = list[dict[str, Any]]


class ToolCorrectnessOptions(ComponentConfig):
    expected_tools: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="expected tool names; default: the case's `expected_tools`"
    )
    mode: Literal["exact", "subset", "superset"] = Field(
        "subset", description="subset: every expected tool called; superset: no tool outside the expected set; "
        "exact: the same tools, as many times",
    )
    ordered: bool = Field(False, description="exact and subset: the calls must also follow the expected order")

    @model_validator(mode="after")
    def _ordered_needs_a_sequence_mode(self) -> Self:
        if self.ordered and self.mode == "superset":
            raise ValueError("`ordered` applies to modes exact and subset, not superset")
        return self


class ToolCorrectnessMetric(BaseMetric):
    """How well the called tool names match the expected tools.

    Reads ``tool_calls`` (names, in call order) and ``expected_tools`` (or the `expected_tools` option, which
    wins; an empty list means "no tool expected"). With E the expected names and A the called names, both as
    multisets (a tool expected twice must be called twice):

    - `subset` (default): every expected tool called. Value = |A ∩ E| / |E| (1 when E is empty).
    - `superset`: no tool outside the expected set. Value = calls whose name is in set(E) / |A| (1 when A is
      empty); repeating an expected tool is fine.
    - `exact`: the same multiset. Value = |A ∩ E| / max(|A|, |E|) (1 when both are empty).

    With `ordered: true` (exact and subset), |A ∩ E| becomes the longest common subsequence of the two name
    sequences, so calls out of the expected order do not count. Example: E = [search, fetch], A = [search,
    search, summarize]: subset 1/2, superset 2/3, exact 1/3. Violations: `missing_tool` (an expected tool not
    called enough), `out_of_order` (called, but not in the expected order), `unexpected_tool` (with its
    `index`: a call outside set(E); in `exact` mode also a call beyond its tool's expected count or, ordered,
    one left out of the common subsequence).

    Not applicable when neither the option nor the case gives expected tools.
    """

    kind: ClassVar[str] = "tool_correctness"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    needs: ClassVar[tuple[str, ...]] = ("tool_calls", "expected_tools")
    Options: ClassVar[type[ComponentConfig]] = ToolCorrectnessOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ToolCorrectnessOptions, self.options)
        source = opts.expected_tools if opts.expected_tools is not None else eval_case.expected_tools
        if source is None:
            return None
        expected, called = list(source), tool_names(eval_case)
        if opts.mode == "superset":
            allowed = set(expected)
            violations = _unexpected(called, [i for i, name in enumerate(called) if name not in allowed], "")
            value = (len(called) - len(violations)) / len(called) if called else 1.0
            matched = len(called) - len(violations)
        else:
            if opts.ordered:
                pairs = align(expected, called, str.__eq__)
                matched = len(pairs)
                violations = _missing_in_order(expected, called, {e for e, _ in pairs})
                extra = sorted(set(range(len(called))) - {a for _, a in pairs})
            else:
                want, have = _counts(expected), _counts(called)
                matched = sum(min(count, have.get(name, 0)) for name, count in want.items())  # |A ∩ E|, multisets
                violations = _missing(want, have)
                extra = _extra_calls(want, called) if opts.mode == "exact" else []
            if opts.mode == "exact":
                violations += _unexpected(called, extra, " at that point" if opts.ordered else "")
                denominator = max(len(called), len(expected))
            else:
                denominator = len(expected)
            value = matched / denominator if denominator else 1.0
        order = " in order" if opts.ordered else ""
        headline = f"{opts.mode}{order}: {matched} matched; {len(called)} call(s), {len(expected)} expected"
        return self.score(value, with_violations(headline, violations), mode=opts.mode, ordered=opts.ordered,
                          matched=matched, called=len(called), expected=len(expected),
                          **violation_metadata(violations))


def _counts(names: list[str]) -> dict[str, int]:
    """How many times each name occurs, in first-occurrence order (a Counter without its Python-level
    construction: this runs for every case with expected tools)."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def _missing(want: dict[str, int], have: dict[str, int]) -> Problems:
    return [violation("missing_tool", f"{name} expected {count} time(s), called {called}", tool=name,
                      expected=count, value=called)
            for name, count in want.items() if (called := have.get(name, 0)) < count]


def _missing_in_order(expected: list[str], called: list[str], aligned: set[int]) -> Problems:
    out = []
    for position, name in enumerate(expected):
        if position in aligned:
            continue
        if name in called:
            out.append(violation("out_of_order", f"{name} (expected position {position}) not called in the "
                                 f"expected order (first at index {called.index(name)})", tool=name,
                                 index=called.index(name), position=position))
        else:
            out.append(violation("missing_tool", f"{name} (expected position {position}) never called", tool=name,
                                 position=position))
    return out


def _extra_calls(want: dict[str, int], called: list[str]) -> list[int]:
    """Indices of the calls beyond what ``want`` (expected counts) allows for their tool (the later calls of a
    tool)."""
    budget = dict(want)
    extra = []
    for index, name in enumerate(called):
        if budget.get(name, 0) > 0:
            budget[name] -= 1
        else:
            extra.append(index)
    return extra


def _unexpected(called: list[str], indices: list[int], where: str) -> Problems:
    return [violation("unexpected_tool", f"{called[i]} called at index {i} is not expected{where}", tool=called[i],
                      index=i)
            for i in indices]
