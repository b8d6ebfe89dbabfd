"""The router's switch for ``llm_call`` cases (``default_mappers(llm_call_cases=False)``, used when no configured
metric can score one): on every corpus and captured trace the trace cases and the not-evaluable items are exactly
those of the full mapping, and no ``llm_call`` case is built."""

from __future__ import annotations

from pathlib import Path

from corpus_loader import load_traces

from evald.mapping.router import MapperRouter, default_mappers
from evald.model import AssembledTrace

DATA = Path(__file__).resolve().parents[1] / "testdata"


def _every_trace() -> list[AssembledTrace]:
    files = sorted(p for source in (DATA / "corpus", DATA / "captured") for p in source.glob("*/*.pb")
                   if not p.name.endswith(".logs.pb"))
    return [trace for path in files for trace in load_traces(path)]


def test_without_llm_call_cases_the_trace_cases_are_unchanged() -> None:
    full, trace_only = MapperRouter(default_mappers()), MapperRouter(default_mappers(llm_call_cases=False))
    traces = _every_trace()
    llm_calls = 0
    for trace in traces:
        everything, lean = full.map(trace), trace_only.map(trace)
        llm_calls += sum(c.scope == "llm_call" for c in everything.cases)
        assert [c for c in everything.cases if c.scope != "llm_call"] == list(lean.cases), trace.trace_id
        assert all(c.scope == "trace" for c in lean.cases)
        assert [n for n in everything.not_evaluable if n.scope != "llm_call"] == list(lean.not_evaluable)
        assert everything.warnings == lean.warnings
    assert len(traces) > 300 and llm_calls > 300  # the whole mix, and the switch really left cases out
