"""Per-metric requirements: the case fields a metric cannot do without, checked before it runs.

A metric declares ``needs`` (``BaseMetric.needs``; options can change it through ``required_fields()``): a tuple of
field names, where ``"a|b"`` means "at least one of". The scorer (evald/pipeline/scoring.py) calls
:func:`missing_field` before running the metric; a field that is absent makes the metric a counted skip with reason
``missing_<field>`` (``evald_metric_skips_total{metric,reason}``, the replay lines' ``skipped``), never a 0 or a fail.

Absent means: ``None``; a blank string; an empty ``context``; ``messages`` none of which has text (pydantic-ai
without content keeps the message structure, no text); ``tool_arguments`` (derived): no tool call with its
arguments recorded; and for ``tool_calls``, none known while the case's content was not recorded
(``metadata.content_capture`` ``none`` or ``masked``: an instrumentation without content capture records no tool
calls, so "no call" cannot be told from "not recorded"). Masked values are already absent: the mappers never put a
masking marker in a field (evald/mapping/masking.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any, Final

from evald.case import EvalCase

#: the content fields: what a privacy mode leaves out; a metric that reads them and declares no ``needs`` gets
#: these among its ``requires`` as its needs (users' metrics and the harness adapter are checked like built-ins)
CONTENT_FIELDS: Final = ("input", "output")
_NO_CONTENT: Final = frozenset({"none", "masked"})
_COLLECTIONS: Final = frozenset({"context"})
#: a derived requirement: at least one tool call with its arguments recorded (pydantic-ai without content, and
#: OpenInference's hide modes, keep tool names and ids but not arguments)
TOOL_ARGUMENTS: Final = "tool_arguments"
_FIELDS: Final = frozenset(f.name for f in fields(EvalCase))
_SPECIAL: Final = frozenset({TOOL_ARGUMENTS, "messages", "tool_calls", *_COLLECTIONS})  # not tested as plain fields
#: the checks ``requirement_check`` prepared, by ``needs`` (they come from metric classes' declarations and options:
#: a small, fixed set); the presence test of each field name, prepared once
_CHECKS: dict[tuple[str, ...], Callable[[EvalCase], str | None]] = {}
_PRESENCE: dict[str, Callable[[EvalCase], bool]] = {}


def requirement_check(needs: Sequence[str]) -> Callable[[EvalCase], str | None] | None:
    """``missing_field(case, needs)`` as one function prepared once per ``needs`` (``None``: nothing is needed).
    The scorer keeps it in its plan: a case's check then costs one call, not a walk over the specs and names."""
    key = tuple(needs)
    if not key:
        return None
    check = _CHECKS.get(key)
    if check is None:
        if len(_CHECKS) >= 1024:  # bounded, though metrics declare few distinct needs
            _CHECKS.clear()
        check = _CHECKS[key] = _compile(key)
    return check


def missing_field(case: EvalCase, needs: Sequence[str]) -> str | None:
    """The first needed field the case lacks (the first name of an ``a|b`` alternative), else ``None``."""
    check = requirement_check(needs)
    return None if check is None else check(case)


def is_present(case: EvalCase, name: str) -> bool:
    """Whether the case carries field ``name`` (see the module docstring for what absent means)."""
    present = _PRESENCE.get(name)
    if present is None:
        if len(_PRESENCE) >= 1024:
            _PRESENCE.clear()
        present = _PRESENCE[name] = _presence(name)
    return present(case)


def _compile(needs: tuple[str, ...]) -> Callable[[EvalCase], str | None]:
    specs = [(names[0], tuple(_presence(n) for n in names)) for names in (spec.split("|") for spec in needs)]
    if len(specs) == 1:  # the usual declaration: one field, or one set of alternatives
        first, tests = specs[0]
        if len(tests) == 1 and first in _FIELDS and first not in _SPECIAL:  # a plain field: the test inline
            get = attrgetter(first)

            def check_plain(case: EvalCase) -> str | None:
                value = get(case)
                if value is None or (type(value) is str and (not value or value.isspace())):
                    return first
                return None

            return check_plain

        def check_one(case: EvalCase) -> str | None:
            for present in tests:
                if present(case):
                    return None
            return first

        return check_one

    # several specs: a plain single field is tested inline (no call of its presence test), the rest by their tests
    steps = [(first, attrgetter(first) if len(tests) == 1 and first in _FIELDS and first not in _SPECIAL else None,
              tests) for first, tests in specs]

    def check(case: EvalCase) -> str | None:
        for first, get, tests in steps:
            if get is not None:
                value = get(case)
                if value is None or (type(value) is str and (not value or value.isspace())):
                    return first
                continue
            for present in tests:
                if present(case):
                    break
            else:
                return first
        return None

    return check


def _presence(name: str) -> Callable[[EvalCase], bool]:
    """The test of whether a case carries field ``name``, chosen once for the name."""
    if name == TOOL_ARGUMENTS:
        return lambda case: any(call.arguments is not None for call in case.tool_calls)
    if name == "messages":
        return lambda case: any(m.content for m in case.messages)
    get: Callable[[EvalCase], Any] = (attrgetter(name) if name in _FIELDS
                                      else lambda case: getattr(case, name, None))
    other: Callable[[EvalCase, Any], bool]  # the test of a value that is neither None nor a string
    if name == "tool_calls":  # an empty list is absent only when the emitter recorded no content
        other = lambda case, value: bool(value) or case.metadata.get("content_capture") not in _NO_CONTENT  # noqa: E731
    elif name in _COLLECTIONS:
        other = lambda case, value: bool(value)  # noqa: E731
    else:
        other = lambda case, value: True  # noqa: E731

    def present(case: EvalCase) -> bool:
        value = get(case)
        if value is None:
            return False
        if type(value) is str:
            return bool(value) and not value.isspace()
        return other(case, value)

    return present


def default_needs(requires: Sequence[str]) -> tuple[str, ...]:
    """What a metric that declares no ``needs`` cannot do without: the content fields it reads."""
    return tuple(f for f in CONTENT_FIELDS if f in requires)
