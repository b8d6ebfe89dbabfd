"""evald/span_reads.py: the one definition of SpanRecord's derived reads (its properties call these functions,
and so do the compiled mappers), checked against the rule itself on hand-made spans and every span of the full mix."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evald.mapping.case_parts import case_service_name
from evald.model import SpanRecord
from evald.span_reads import duration_ms, is_root, service_name
from tests.benchmarks.full_mix import SOURCES
from tests.mapping.corpus_loader import load_traces


def _span(start: int = 1, end: int = 2, parent: str | None = None, resource: dict[str, object] | None = None,
          span_id: str = "s" * 16) -> SpanRecord:
    return SpanRecord("t" * 32, span_id, parent, "chat", 1, start, end, {}, resource=resource or {})


def _by_the_rule(span: SpanRecord) -> tuple[bool, float | None, str | None]:
    start, end, name = span.start_time_unix_nano, span.end_time_unix_nano, span.resource.get("service.name")
    return (span.parent_span_id in (None, ""), None if end <= 0 or end < start else (end - start) / 1e6,
            name if isinstance(name, str) else None)


def _check(span: SpanRecord) -> None:
    expected = _by_the_rule(span)
    assert (is_root(span), duration_ms(span), service_name(span)) == expected
    assert (span.is_root, span.duration_ms, span.service_name) == expected  # the properties are these functions


def test_every_span_of_the_full_mix() -> None:
    files = sorted(p for source in SOURCES for p in source.glob("*/*.pb") if not p.name.endswith(".logs.pb"))
    spans = [s for path in files for trace in load_traces(path) for s in trace.spans]
    assert len(spans) > 500
    for span in spans:
        _check(span)


@given(st.integers(-5, 10**19), st.integers(-5, 10**19), st.sampled_from([None, "", "a" * 16]),
       st.sampled_from([{}, {"service.name": "svc"}, {"service.name": 3}, {"service.name": ""}]))
def test_edge_cases(start: int, end: int, parent: str | None, resource: dict[str, object]) -> None:
    _check(_span(start, end, parent, resource))


@pytest.mark.parametrize(("start", "end", "expected"), [(0, 0, None), (5, 4, None), (1_000_000, 3_000_000, 2.0)])
def test_duration(start: int, end: int, expected: float | None) -> None:
    assert duration_ms(_span(start, end)) == expected


def test_a_trace_case_takes_the_anchor_service_else_the_first_span_that_has_one() -> None:
    anchor = _span(resource={"service.name": ""})
    spans = [anchor, _span(resource={"service.name": 7}), _span(resource={"service.name": "b"}),
             _span(resource={"service.name": "c"})]
    assert case_service_name(anchor, spans) == "b"
    assert case_service_name(_span(resource={"service.name": "a"}), spans) == "a"
    assert case_service_name(anchor, spans[:2]) is None
