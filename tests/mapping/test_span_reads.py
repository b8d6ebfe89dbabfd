"""case_parts' span readers give exactly SpanRecord's properties (compiled mappers call them instead of the
properties): on every span of the full mix, and on hand-made edge cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evald.mapping.case_parts import duration_ms, is_root, service_name
from evald.model import SpanRecord

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from corpus_loader import load_traces  # noqa: E402
from full_mix import SOURCES  # noqa: E402


def _span(start: int, end: int, parent: str | None, resource: dict[str, object]) -> SpanRecord:
    return SpanRecord("t" * 32, "s" * 16, parent, "chat", 1, start, end, {}, resource=resource)


def _same(span: SpanRecord) -> None:
    assert is_root(span) is span.is_root
    assert duration_ms(span) == span.duration_ms
    assert service_name(span) == span.service_name


def test_every_span_of_the_full_mix() -> None:
    files = sorted(p for source in SOURCES for p in source.glob("*/*.pb") if not p.name.endswith(".logs.pb"))
    spans = [s for path in files for trace in load_traces(path) for s in trace.spans]
    assert len(spans) > 500
    for span in spans:
        _same(span)


@given(st.integers(-5, 10**19), st.integers(-5, 10**19), st.sampled_from([None, "", "a" * 16]),
       st.sampled_from([{}, {"service.name": "svc"}, {"service.name": 3}, {"service.name": ""}]))
def test_edge_cases(start: int, end: int, parent: str | None, resource: dict[str, object]) -> None:
    _same(_span(start, end, parent, resource))


@pytest.mark.parametrize(("start", "end", "expected"), [(0, 0, None), (5, 4, None), (1_000_000, 3_000_000, 2.0)])
def test_duration(start: int, end: int, expected: float | None) -> None:
    assert duration_ms(_span(start, end, None, {})) == expected
