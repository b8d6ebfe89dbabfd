"""The span and resource attributes the windowed metrics read, copied onto the case before it is queued.

A multi-case metric may read attributes the mappers do not carry into the case: a run group (``evald.run_group``), a
variant (``evald.variant``), a confidence (``evald.confidence``). :func:`annotate` looks each configured name up on
the case's own span, then (a trace case) the trace's root span, then the other spans in start order, then the own
span's resource, and stores what it found in ``case.metadata["window_attributes"]`` (``{name: value}``; nothing is
added when no name is found, so the case is not copied).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evald.case import EvalCase
from evald.metrics.multi_case import WINDOW_ATTRIBUTES
from evald.model import AssembledTrace, SpanRecord


def annotate(case: EvalCase, trace: AssembledTrace, names: Sequence[str]) -> EvalCase:
    """``case`` with the values of ``names`` found in ``trace`` (see the module docstring)."""
    if not names:
        return case
    spans = _ordered(case, trace.spans)
    found: dict[str, object] = {}
    for name in names:
        for span in spans:
            if name in span.attributes:
                found[name] = span.attributes[name]
                break
        else:
            own = spans[0] if spans and spans[0].span_id == case.span_id else None
            if own is not None and name in own.resource:
                found[name] = own.resource[name]
            elif any(name in s.resource for s in spans):
                found[name] = next(s.resource[name] for s in spans if name in s.resource)
    if not found:
        return case
    return replace(case, metadata={**case.metadata, WINDOW_ATTRIBUTES: found})


def _ordered(case: EvalCase, spans: Sequence[SpanRecord]) -> list[SpanRecord]:
    own = [s for s in spans if s.span_id == case.span_id]
    if case.scope == "llm_call":
        return own
    rest = sorted((s for s in spans if s.span_id != case.span_id),
                  key=lambda s: (not s.is_root, s.start_time_unix_nano))
    return own + rest
