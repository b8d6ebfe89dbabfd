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

from collections.abc import Sequence
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
#: ``"a|b"`` specs split once (they come from metric classes' declarations: a small, fixed set); this runs per case
_ALTERNATIVES: dict[str, tuple[str, ...]] = {}


def missing_field(case: EvalCase, needs: Sequence[str]) -> str | None:
    """The first needed field the case lacks (the first name of an ``a|b`` alternative), else ``None``."""
    for spec in needs:
        if "|" in spec:
            names = _ALTERNATIVES.get(spec) or _ALTERNATIVES.setdefault(spec, tuple(spec.split("|")))
            if not any(is_present(case, name) for name in names):
                return names[0]
        elif not is_present(case, spec):
            return spec
    return None


def is_present(case: EvalCase, name: str) -> bool:
    """Whether the case carries field ``name`` (see the module docstring for what absent means)."""
    if name == TOOL_ARGUMENTS:
        return any(call.arguments is not None for call in case.tool_calls)
    if name == "messages":
        return any(m.content for m in case.messages)
    value: Any = getattr(case, name, None)
    if value is None:
        return False
    if type(value) is str:
        return bool(value) and not value.isspace()
    if name == "tool_calls":
        return bool(value) or case.metadata.get("content_capture") not in _NO_CONTENT
    if name in _COLLECTIONS:
        return bool(value)
    return True


def default_needs(requires: Sequence[str]) -> tuple[str, ...]:
    """What a metric that declares no ``needs`` cannot do without: the content fields it reads."""
    return tuple(f for f in CONTENT_FIELDS if f in requires)
