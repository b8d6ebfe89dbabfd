from __future__ import annotations

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from evald.assembly.completion import Completion
from evald.assembly.window import AssemblyConfig, TraceWindow
from evald.errors import QueueFullError
from evald.model import AssembledTrace, Delivery, SignalBatch
from evald.receivers.ingest import Ingestor
from evald.receivers.otlp import OTLPHttpConfig
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.telemetry import Telemetry
from evald.testing import FakeClock, log, span
from tests.receivers.support import logs_request, sample, trace_request

T1 = "11111111111111111111111111111111"
T2 = "22222222222222222222222222222222"


def make(**cfg: object) -> tuple[TraceWindow, FakeClock, Telemetry, list[AssembledTrace]]:
    clock = FakeClock()
    tm = Telemetry()
    window = TraceWindow(AssemblyConfig.model_validate({"settle": 1, "decision_wait": 10, **cfg}), tm, clock)
    return window, clock, tm, []


def value(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


async def collect_into(out: list[AssembledTrace]):  # type: ignore[no-untyped-def]
    async def sink(trace: AssembledTrace, completion: Completion) -> None:
        out.append(trace)
        completion.release()

    return sink


async def test_releases_after_root_settles() -> None:
    window, clock, tm, out = make()
    sink = await collect_into(out)
    root = span(T1, "a" * 16)
    child = span(T1, "b" * 16, parent="a" * 16)
    window.consume(SignalBatch(spans=(child,)))
    clock.advance(5)
    assert await window.release_due(sink) == 0  # no root yet
    window.consume(SignalBatch(spans=(root,)))
    clock.advance(0.5)
    assert await window.release_due(sink) == 0  # settling
    clock.advance(0.6)
    assert await window.release_due(sink) == 1
    assert out[0].complete and {s.span_id for s in out[0].spans} == {"a" * 16, "b" * 16}
    assert value(tm, "evald_assembly_released_traces_total", trigger="root_settled") == 1


async def test_one_deadline_per_trace_is_scheduled_per_batch() -> None:
    """A trace whose root arrives with its first batch gets its settle deadline only, not also a decision_wait one
    left stale on the heap (the heap would hold every trace of the last decision_wait)."""
    window, clock, _, out = make()
    sink = await collect_into(out)
    traces = [f"{i:032x}" for i in range(1, 101)]
    window.consume(SignalBatch(spans=tuple(s for t in traces for s in (span(t, "b" * 16, parent="a" * 16),
                                                                       span(t, "a" * 16)))))
    assert len(window._heap) == 100
    window.consume(SignalBatch(spans=(span(T1, "c" * 16, parent="a" * 16),)))  # rootless: its decision_wait only
    assert len(window._heap) == 101
    clock.advance(1.1)
    assert await window.release_due(sink) == 100 and len(window._heap) == 1
    clock.advance(9)
    assert await window.release_due(sink) == 1 and not window._heap and out[-1].complete is False


async def test_decision_wait_releases_rootless_trace_as_incomplete() -> None:
    window, clock, tm, out = make()
    sink = await collect_into(out)
    window.consume(SignalBatch(spans=(span(T1, parent="c" * 16),)))
    clock.advance(10.01)
    assert await window.release_due(sink) == 1
    assert out[0].complete is False
    assert value(tm, "evald_assembly_released_traces_total", trigger="decision_wait") == 1


async def test_duplicates_and_late_spans_are_counted_when_late_spans_are_dropped() -> None:
    window, clock, tm, out = make(late_spans="drop")
    sink = await collect_into(out)
    root = span(T1, "a" * 16)
    window.consume(SignalBatch(spans=(root,)))
    window.consume(SignalBatch(spans=(root,)))  # redelivery
    assert value(tm, "evald_assembly_dropped_spans_total", reason="duplicate") == 1
    clock.advance(2)
    await window.release_due(sink)
    window.consume(SignalBatch(spans=(span(T1, "b" * 16, parent="a" * 16),)))
    assert value(tm, "evald_assembly_dropped_spans_total", reason="late") == 1
    assert len(window) == 0


async def test_a_late_span_reopens_the_trace_as_a_new_revision() -> None:
    window, clock, tm, out = make(late_retention=1)
    sink = await collect_into(out)
    root = span(T1, "a" * 16)
    window.consume(SignalBatch(spans=(root,)))
    clock.advance(2)
    await window.release_due(sink)
    window.consume(SignalBatch(spans=(root,)))  # a redelivery of a released span does not reopen anything
    assert value(tm, "evald_assembly_dropped_spans_total", reason="duplicate") == 1 and len(window) == 0
    window.consume(SignalBatch(spans=(span(T1, "b" * 16, parent="a" * 16),)))  # new: reopens
    assert len(window) == 1 and value(tm, "evald_assembly_reopened_traces_total") == 1
    clock.advance(2)
    await window.release_due(sink)
    assert [t.revision for t in out] == [1, 2]
    assert {s.span_id for s in out[1].spans} == {"a" * 16, "b" * 16} and out[1].complete
    # retention is bounded: T2 pushes T1 out, so a later span of T1 is only counted as late
    window.consume(SignalBatch(spans=(span(T2, "c" * 16),)))
    clock.advance(2)
    await window.release_due(sink)
    window.consume(SignalBatch(spans=(span(T1, "d" * 16, parent="a" * 16),)))
    assert value(tm, "evald_assembly_dropped_spans_total", reason="late") == 1 and len(window) == 0


async def test_a_flush_retains_released_traces_for_late_spans_and_a_final_flush_does_not() -> None:
    """A flush while input may still come (a full replay window) keeps the released traces for late spans; the
    final one (the end of a replay, shutdown) keeps none: nothing can arrive any more, and retaining would only cost
    the work and the memory until exit."""
    window, clock, tm, out = make(late_retention=10)
    sink = await collect_into(out)
    window.consume(SignalBatch(spans=(span(T1, "a" * 16),)))
    assert await window.flush(sink) == 1
    window.consume(SignalBatch(spans=(span(T1, "b" * 16, parent="a" * 16),)))  # late: reopens the retained trace
    assert value(tm, "evald_assembly_reopened_traces_total") == 1
    window.consume(SignalBatch(spans=(span(T2, "c" * 16),)))
    assert await window.flush(sink, final=True) == 2
    assert [t.revision for t in out] == [1, 2, 1] and len(window._retained) == 0
    assert window._memory.held == 0  # every charge was dropped when the sink released it


async def test_a_trace_reopened_by_a_late_span_counts_against_num_traces() -> None:
    window, clock, tm, out = make(num_traces=1, late_retention=10)
    sink = await collect_into(out)
    window.consume(SignalBatch(spans=(span(T1, "a" * 16),)))
    clock.advance(2)
    await window.release_due(sink)
    window.consume(SignalBatch(spans=(span(T2, "c" * 16),)))  # the window is full again
    with pytest.raises(QueueFullError):
        window.consume(SignalBatch(spans=(span(T1, "b" * 16, parent="a" * 16),)))
    assert len(window) == 1 and value(tm, "evald_assembly_reopened_traces_total") == 0


async def test_full_window_refuses_whole_batch() -> None:
    window, clock, tm, out = make(num_traces=1)
    window.consume(SignalBatch(spans=(span(T1),)))
    with pytest.raises(QueueFullError) as err:
        window.consume(SignalBatch(spans=(span(T1), span(T2))))
    assert err.value.retry_after > 0
    assert len(window) == 1 and len(window._pending[T1].spans) == 1  # nothing of the refused batch was kept


async def test_max_spans_per_trace_rejects_and_reports() -> None:
    window, clock, tm, out = make(max_spans_per_trace=3)
    result = window.consume(SignalBatch(spans=tuple(span(T1, parent="f" * 16) for _ in range(5))))
    assert result.rejected_spans == 2 and "max_spans_per_trace" in result.message
    assert len(window._pending[T1].spans) == 3 and window._pending[T1].truncated


async def test_spans_past_max_spans_per_trace_are_counted_in_one_counter_only() -> None:
    """Rejected spans are refused (the sender is told): the receiver counts them, the window does not also count
    them as accepted-then-dropped (issue 16 item 13: they were in two drop counters)."""
    window, clock, tm, out = make(max_spans_per_trace=3, max_logs_per_trace=1)
    ingestor = Ingestor("otlp", "http", window, tm)
    rejected, message = ingestor.ingest_traces(trace_request(5, attributes={"k": "v"}))
    assert rejected == 2 and "max_spans_per_trace" in message
    assert sample(tm.registry, "evald_receiver_refused_spans_total", receiver="otlp", transport="http",
                  reason="consumer_rejected") == 2
    assert sample(tm.registry, "evald_receiver_accepted_spans_total", receiver="otlp", transport="http") == 3
    rejected, message = ingestor.ingest_logs(logs_request(3))
    assert rejected == 2 and "max_logs_per_trace" in message
    assert sample(tm.registry, "evald_receiver_refused_log_records_total", receiver="otlp", transport="http",
                  reason="consumer_rejected") == 2
    dropped = [s for m in tm.registry.collect() if m.name.startswith("evald_assembly_dropped") for s in m.samples
               if s.name.endswith("_total")]
    assert sum(s.value for s in dropped) == 0


async def test_logs_join_their_trace() -> None:
    window, clock, tm, out = make()
    sink = await collect_into(out)
    root = span(T1, "a" * 16)
    window.consume(SignalBatch(logs=(log(T1, "a" * 16, "gen_ai.client.inference.operation.details"),)))
    window.consume(SignalBatch(spans=(root,)))
    clock.advance(1.5)
    await window.release_due(sink)
    assert len(out[0].logs) == 1 and out[0].logs_for("a" * 16)


async def test_delivery_acknowledged_only_when_every_trace_is_done() -> None:
    window, clock, tm, _ = make()
    acked: list[bool] = []
    delivery = Delivery(lambda: acked.append(True))
    window.consume(SignalBatch(spans=(span(T1, "a" * 16), span(T2, "b" * 16)), delivery=delivery))
    delivery.seal()
    held: list[Completion] = []

    async def sink(trace: AssembledTrace, completion: Completion) -> None:
        held.append(completion)

    clock.advance(2)
    await window.release_due(sink)
    assert len(held) == 2 and not acked
    held[0].release()
    assert not acked
    held[1].release()
    assert acked == [True]


async def test_shutdown_flushes_then_refuses() -> None:
    window, clock, tm, out = make()
    sink = await collect_into(out)
    window.consume(SignalBatch(spans=(span(T1, "a" * 16),)))
    await window.shutdown(sink, timeout=1)
    assert len(out) == 1
    with pytest.raises(QueueFullError):
        window.consume(SignalBatch(spans=(span(T2),)))


def test_config_rejects_decision_wait_below_settle() -> None:
    with pytest.raises(ValueError, match="decision_wait"):
        AssemblyConfig.model_validate({"settle": 5, "decision_wait": 1})


async def test_traces_in_window_gauge_is_read_at_scrape_time() -> None:
    window, clock, tm, out = make()
    sink = await collect_into(out)
    window.consume(SignalBatch(spans=(span(T1, "a" * 16), span(T2, "b" * 16))))
    assert value(tm, "evald_assembly_traces") == 2
    clock.advance(1.1)
    assert await window.release_due(sink) == 2
    assert value(tm, "evald_assembly_traces") == 0
    window.consume(SignalBatch(spans=(span("3" * 32, "c" * 16),)))
    assert window.drop_all("shutdown") == 1
    assert value(tm, "evald_assembly_traces") == 0


async def test_a_request_with_more_traces_than_the_window_is_taken_in_part_not_refused_forever() -> None:
    """Issue 16 item 8: num_traces + 500 distinct traces into an empty window: a window's worth is kept, the rest is
    rejected as partial success (no retry hint: the request can never fit)."""
    window, clock, tm, out = make(num_traces=1000)
    sink = await collect_into(out)
    spans = tuple(span(f"{i + 1:032x}", f"{i + 1:016x}") for i in range(1500))
    result = window.consume(SignalBatch(spans=spans))
    assert len(window) == 1000 and result.rejected_spans == 500
    assert "500 of the request's 1500 traces did not fit" in result.message
    assert {s.trace_id for s in spans[:1000]} == set(window._pending)  # the first traces in the request are kept
    assert value(tm, "evald_assembly_refused_requests_total", reason="request_too_large") == 1
    # a full window: nothing of it fits now, so the sender is asked to retry, and the retry is taken in part
    with pytest.raises(QueueFullError):
        window.consume(SignalBatch(spans=spans[1000:] + tuple(span(f"{i:032x}", "a" * 16) for i in (9001, 9002))
                                   + tuple(span(f"{i:032x}", "b" * 16) for i in range(10_000, 10_999))))
    clock.advance(10.1)
    assert await window.release_due(sink) == 1000
    result = window.consume(SignalBatch(spans=spans[1000:] + tuple(span(f"{i:032x}") for i in range(20_000, 21_000))))
    assert len(window) == 1000 and result.rejected_spans == 500


async def test_a_late_span_that_is_rejected_never_reopens_its_trace() -> None:
    """Issue 16 item 9: a trace released at max_spans_per_trace stays released when more of its spans arrive: they
    are rejected (partial success) and nothing is re-scored."""
    window, clock, tm, out = make(max_spans_per_trace=3, late_retention=10)
    sink = await collect_into(out)
    root = span(T1, "a" * 16)
    window.consume(SignalBatch(spans=(root, *(span(T1, f"{i:016x}", parent="a" * 16) for i in (1, 2)))))
    clock.advance(2)
    assert await window.release_due(sink) == 1
    released_before = value(tm, "evald_assembly_released_traces_total", trigger="root_settled")
    for i in range(6):
        result = window.consume(SignalBatch(spans=(span(T1, f"{100 + i:016x}", parent="a" * 16),)))
        assert result.rejected_spans == 1 and "max_spans_per_trace" in result.message
    clock.advance(30)
    assert await window.release_due(sink) == 0 and len(window) == 0
    assert [t.revision for t in out] == [1]
    assert value(tm, "evald_assembly_released_traces_total", trigger="root_settled") == released_before == 1
    assert value(tm, "evald_assembly_reopened_traces_total") == 0
    # a trace below the bound still reopens (the rejection is about the bound only)
    window.consume(SignalBatch(spans=(span(T2, "c" * 16),)))
    clock.advance(2)
    await window.release_due(sink)
    window.consume(SignalBatch(spans=(span(T2, "d" * 16, parent="c" * 16),)))
    clock.advance(2)
    await window.release_due(sink)
    assert [t.revision for t in out] == [1, 1, 2] and value(tm, "evald_assembly_reopened_traces_total") == 1


@pytest.mark.integration
async def test_the_http_receiver_answers_partial_success_for_a_request_larger_than_the_window() -> None:
    """The same through the real OTLP/HTTP receiver: 200 with partial_success, not 503 + Retry-After."""
    window, clock, tm, out = make(num_traces=1000)
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), tm)
    await receiver.start(window)
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            response = await client.post(
                f"http://127.0.0.1:{receiver.bound_port}/v1/traces",
                content=trace_request(1500, random_ids=True).SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"})
    finally:
        await receiver.shutdown(1.0)
    assert response.status_code == 200 and "retry-after" not in response.headers
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 500 and "did not fit" in answer.partial_success.error_message
    assert len(window) == 1000
    labels = {"receiver": "otlp", "transport": "http"}
    assert sample(tm.registry, "evald_receiver_refused_spans_total", reason="consumer_rejected", **labels) == 500
    assert sample(tm.registry, "evald_receiver_requests_total", outcome="partial_success", **labels) == 1


async def test_a_source_can_deliver_an_oversized_batch_in_parts_instead() -> None:
    window, clock, tm, out = make(num_traces=1000)
    sink = await collect_into(out)
    batch = SignalBatch(spans=tuple(span(f"{i + 1:032x}", f"{i + 1:016x}") for i in range(1500)))
    first, second = window.split(batch)
    assert window.consume(first).rejected_spans == 0 and len(window) == 1000
    with pytest.raises(QueueFullError):
        window.consume(second)
    clock.advance(1.1)
    await window.release_due(sink)
    assert window.consume(second).rejected_spans == 0 and len(window) == 500
