from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.assembly import sizing
from evald.assembly.sizing import batch_sizes, log_bytes, sizes_of, span_bytes, split_batch, value_bytes
from evald.model import SignalBatch
from evald.receivers.convert import convert_logs, convert_traces
from evald.testing import log, span
from tests.receivers.support import trace_request

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
CONFIGURATIONS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def allocated(convert: Callable[[Any], Any], request: Any, estimate: Callable[[Any], int]) -> tuple[int, int]:
    """(bytes converting ``request`` really allocates and keeps, the estimate of its records)."""
    convert(request)  # the resource memo is warm, as it is for a running receiver
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        records = convert(request).records
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return kept, sum(estimate(r) for r in records)


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_the_estimate_is_close_to_what_the_corpus_records_allocate(configuration: str) -> None:
    """The figure docs/architecture.md and evald/assembly/sizing.py quote: 0.85-1.1 of tracemalloc's count."""
    real = estimated = 0
    for path in sorted((CORPUS / configuration).glob("*.pb")):
        if path.name.endswith(".logs.pb"):
            kept, est = allocated(convert_logs, ExportLogsServiceRequest.FromString(path.read_bytes()), log_bytes)
        else:
            kept, est = allocated(convert_traces, ExportTraceServiceRequest.FromString(path.read_bytes()), span_bytes)
        real += kept
        estimated += est
    assert estimated > 0 and 0.75 <= real / estimated <= 1.3, (real, estimated)


def test_large_values_are_charged_at_their_size() -> None:
    request = trace_request(4, attributes={"blob": "y" * (1 << 20), "raw": b"z" * (1 << 19)}, random_ids=True)
    real, estimated = allocated(convert_traces, request, span_bytes)
    assert 0.95 <= real / estimated <= 1.05


def test_nested_values_are_walked_without_recursion() -> None:
    deep: Any = "leaf" * 100
    for _ in range(100_000):  # far deeper than the interpreter's recursion limit
        deep = [deep]
    assert value_bytes(deep) > 400
    assert value_bytes({"a": ["x" * 1000, {"b": 1.5}], "c": None}) > 1000
    assert value_bytes(7) == value_bytes(None) > 0


def test_batch_sizes_add_up_per_trace_in_arrival_order() -> None:
    a, b = "a" * 32, "b" * 32
    spans = (span(b, attributes={"k": "v" * 100}), span(a), span(b))
    logs = (log(a, None, "gen_ai.choice", body={"message": "hi"}),)
    sizes, span_sizes, log_sizes = batch_sizes(SignalBatch(spans=spans, logs=logs))
    assert list(sizes) == [b, a]
    assert sizes[b] == span_bytes(spans[0]) + span_bytes(spans[2]) and span_sizes[0] > span_sizes[2] + 100
    assert sizes[a] == span_bytes(spans[1]) + log_sizes[0]


def test_split_batch_cuts_whole_traces_in_arrival_order_within_both_bounds() -> None:
    traces = [f"{i + 1:032x}" for i in range(5)]
    spans = tuple(span(t, attributes={"k": "v" * (1000 * (i + 1))}) for i, t in enumerate(traces)) + (
        span(traces[0]),)  # a late span of the first trace stays with it
    logs = (log(traces[4], None, "gen_ai.choice"),)
    batch = SignalBatch(spans=spans, logs=logs, source="replay")
    (whole,) = split_batch(batch, 5, 1 << 20)
    assert (whole.spans, whole.logs, whole.source) == (batch.spans, batch.logs, batch.source)
    parts = split_batch(batch, 2, 1 << 20)
    assert [[s.trace_id for s in p.spans] for p in parts] == [
        [traces[0], traces[1], traces[0]], [traces[2], traces[3]], [traces[4]]]
    assert [len(p.logs) for p in parts] == [0, 0, 1] and all(p.source == "replay" for p in parts)
    sizes, _, _ = batch_sizes(batch)
    bound = sizes[traces[0]] + sizes[traces[1]]  # each later trace is larger than half of it: one per part
    by_bytes = split_batch(batch, 10, bound)
    assert [len({s.trace_id for s in p.spans}) for p in by_bytes] == [2, 1, 1, 1]
    assert split_batch(batch, 10, 10)[0].spans == (spans[0], spans[5])  # a trace over the bound: a part alone
    assert sorted(s.span_id for p in by_bytes for s in p.spans) == sorted(s.span_id for s in spans)


def test_parts_carry_the_estimates_split_computed_so_they_are_not_sized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    traces = [f"{i + 1:032x}" for i in range(6)]
    spans = tuple(span(t, attributes={"k": "v" * (100 * (i + 1))}) for i, t in enumerate(traces * 2))
    logs = (log(traces[2], None, "gen_ai.choice", body={"message": "hi"}),)
    batch = SignalBatch(spans=spans, logs=logs)
    whole = batch_sizes(batch)
    calls: list[int] = []
    counted = sizing.batch_sizes
    monkeypatch.setattr(sizing, "batch_sizes", lambda b: calls.append(1) or counted(b))
    parts = split_batch(batch, 4, 1 << 20)
    carried = [sizes_of(part) for part in parts]
    assert len(calls) == 1 and len(parts) == 2  # sized once, by the split, not again by sizes_of
    for part, (sizes, span_sizes, log_sizes) in zip(parts, carried, strict=True):
        assert span_sizes == [span_bytes(s) for s in part.spans] and log_sizes == [log_bytes(r) for r in part.logs]
        assert sizes == {t: whole[0][t] for t in dict.fromkeys(s.trace_id for s in part.spans)}
    changed = replace(parts[0], spans=parts[0].spans[:1])  # a copy with other spans is sized afresh
    assert sizes_of(changed)[1] == [span_bytes(parts[0].spans[0])]
