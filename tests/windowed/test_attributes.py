"""annotate: a configured attribute is read from the case's span, then the root span, then other spans, then the
resource."""

from __future__ import annotations

from dataclasses import replace

from evald.case import EvalCase
from evald.metrics.multi_case import WINDOW_ATTRIBUTES, attribute
from evald.model import AssembledTrace
from evald.testing import span
from evald.windowed.attributes import annotate

TRACE = "0af7651916cd43dd8448eb211c80319c"


def test_own_span_then_root_then_resource() -> None:
    root = span(TRACE, "a" * 16, name="root", attributes={"evald.run_group": "g-root", "evald.variant": "typos"})
    own = span(TRACE, "b" * 16, parent="a" * 16, attributes={"evald.run_group": "g-own"})
    own = replace(own, resource={**own.resource, "evald.confidence": 0.8})
    trace = AssembledTrace(TRACE, (root, own))
    case = EvalCase(trace_id=TRACE, span_id="b" * 16, scope="trace")
    out = annotate(case, trace, ["evald.run_group", "evald.variant", "evald.confidence", "absent"])
    assert out.metadata[WINDOW_ATTRIBUTES] == {"evald.run_group": "g-own", "evald.variant": "typos",
                                               "evald.confidence": 0.8}
    assert attribute(out, "absent") is None
    call = replace(case, scope="llm_call")
    assert annotate(call, trace, ["evald.variant"]) is call  # an LLM call reads its own span only: nothing found


def test_nothing_configured_or_found_keeps_the_case() -> None:
    trace = AssembledTrace(TRACE, (span(TRACE, "c" * 16),))
    case = EvalCase(trace_id=TRACE, span_id="c" * 16)
    assert annotate(case, trace, []) is case
    assert annotate(case, trace, ["evald.run_group"]) is case
