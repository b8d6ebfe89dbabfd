"""Assay's temporal ``sequence_valid`` rules (its Policy DSL v1.1): ``eventually``, ``after``, ``never_after`` and
``sequence``. Each rule checks a whole trajectory (the case's tool-call names, in call order) and returns its
violations; an empty list means the rule holds. Semantics, as Assay documents and tests them, for a complete trace:

- ``eventually`` (``tool``, ``within``): a matching call at one of the first ``within`` positions (index
  ``< within``); a trace without one there fails, a shorter trace included (it has ended).
- ``after`` (``trigger``, ``then``, ``within``): a ``trigger`` call at index ``i`` sets a deadline ``i+within``
  that a ``then`` call meets; a later trigger call sets a new deadline in place of a pending one (Assay's reading).
  A call past a pending deadline, or the trace ending with one pending, is the violation (one per rule). A ``then``
  call after ``i+within`` is too late (Assay's evaluator also takes one right after the deadline when nothing
  came between; evald follows the documented rule, "within N calls").
- ``never_after`` (``trigger``, ``forbidden``): no ``forbidden`` call after the first ``trigger`` call; each one is a
  violation (``forbidden`` calls before the trigger are fine).
- ``sequence`` (``tools``, ``strict``): the listed tools are called in that order. Walking the trace while expecting
  ``tools[k]``: a call matching it advances; without ``strict``, a call matching a later step (``tools[j]``,
  ``j > k``) is an order violation; with ``strict: true``, once the sequence has started any other call before it
  completes is a violation (the steps must be consecutive; calls before the start are not looked at). A trace
  calling none of the steps does not exercise the rule (it holds); one that starts it and ends part-way fails.
  Checking stops at the first violation or once complete.

Tool fields take one glob or a list (``fnmatch``; a plain name matches itself), like the other rules. These follow
Assay's evaluator for a finished run (its ``TraceExtent::Complete``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evald.config.base import ComponentConfig
from evald.metrics.agent.trajectory import GlobList, matches_any, show_globs, violation

Problems = list[dict[str, Any]]


class EventuallyRule(ComponentConfig):
    type: Literal["eventually"] = Field(description="a `tool` call among the first `within` calls")
    tool: GlobList = Field(description="tool glob(s)")
    within: int = Field(ge=1, description="the call must come at one of the first `within` positions")

    def check(self, names: list[str]) -> Problems:
        at = next((i for i, name in enumerate(names) if matches_any(name, self.tool)), None)
        if at is not None and at < self.within:
            return []
        actual = "it was never called" if at is None else f"first called at index {at}"
        return [violation("eventually", f"eventually: expected {show_globs(self.tool)} within the first "
                          f"{self.within} call(s), {actual}", tool=", ".join(self.tool),
                          **({} if at is None else {"index": at}),
                          constraint=f"eventually: {show_globs(self.tool)} within {self.within}")]


class AfterRule(ComponentConfig):
    type: Literal["after"] = Field(description="every `trigger` call is followed by a `then` call within `within`")
    trigger: GlobList = Field(description="tool glob(s) that start the deadline")
    then: GlobList = Field(description="tool glob(s) that must follow")
    within: int = Field(ge=1, description="the `then` call comes at most this many calls after the trigger")

    def check(self, names: list[str]) -> Problems:
        constraint = f"after: {show_globs(self.then)} within {self.within} after {show_globs(self.trigger)}"
        pending: tuple[int, int] | None = None  # (trigger index, deadline index)
        for i, name in enumerate(names):
            if pending is not None:
                if i > pending[1]:
                    return [self._missed(names, pending[0], f"not called by index {pending[1]}", constraint)]
                if matches_any(name, self.then):
                    pending = None
            if matches_any(name, self.trigger):
                pending = (i, i + self.within)
        if pending is not None:
            return [self._missed(names, pending[0], "the trace ended without it", constraint)]
        return []

    def _missed(self, names: list[str], at: int, why: str, constraint: str) -> dict[str, Any]:
        return violation("after", f"after: {show_globs(self.then)} required within {self.within} call(s) after "
                         f"{names[at]} at index {at}, {why}", tool=names[at], index=at, constraint=constraint)


class NeverAfterRule(ComponentConfig):
    type: Literal["never_after"] = Field(description="no `forbidden` call after the first `trigger` call")
    trigger: GlobList = Field(description="tool glob(s) after which `forbidden` is not allowed")
    forbidden: GlobList = Field(description="tool glob(s) forbidden once a trigger was called")

    def check(self, names: list[str]) -> Problems:
        start = next((i for i, name in enumerate(names) if matches_any(name, self.trigger)), len(names))
        constraint = f"never_after: {show_globs(self.forbidden)} never after {show_globs(self.trigger)}"
        return [violation("never_after", f"never_after: {name} called at index {i} after {names[start]} at index "
                          f"{start}", tool=name, index=i, constraint=constraint)
                for i, name in enumerate(names) if i > start and matches_any(name, self.forbidden)]


class SequenceRule(ComponentConfig):
    type: Literal["sequence"] = Field(description="the `tools` are called in this order (`strict`: consecutively)")
    tools: list[GlobList] = Field(min_length=2, description="the steps in order, each one glob or a list")
    strict: bool = Field(False, description="no other call between the steps once the sequence has started")

    def check(self, names: list[str]) -> Problems:
        steps, k = self.tools, 0
        shown = " -> ".join(show_globs(step) for step in steps)
        constraint = f"sequence{' (strict)' if self.strict else ''}: {shown}"
        for i, name in enumerate(names):
            if k == len(steps):
                return []
            if matches_any(name, steps[k]):
                k += 1
                continue
            if self.strict and k > 0:
                return [violation("sequence", f"sequence: {name} at index {i} interrupts the strict sequence "
                                  f"(expected {show_globs(steps[k])})", tool=name, index=i, constraint=constraint)]
            later = None if self.strict else next((j for j in range(k + 1, len(steps))
                                                   if matches_any(name, steps[j])), None)
            if later is not None:
                return [violation("sequence", f"sequence: {name} at index {i} is step {later + 1} but step {k + 1} "
                                  f"({show_globs(steps[k])}) has not been called", tool=name, index=i,
                                  constraint=constraint)]
        if 0 < k < len(steps):
            return [violation("sequence", f"sequence: incomplete, {k} of {len(steps)} step(s) called (next: "
                              f"{show_globs(steps[k])})", constraint=constraint)]
        return []
