from __future__ import annotations

import asyncio
import resource
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic import ValidationError

from evald.assembly.completion import Completion
from evald.assembly.memory import MIB, MemoryLimiterConfig
from evald.assembly.sizing import span_bytes
from evald.assembly.window import AssemblyConfig, TraceWindow
from evald.config.loader import parse_config
from evald.errors import QueueFullError
from evald.model import AssembledTrace, SignalBatch, SpanRecord
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.service import EvaldService
from evald.telemetry import Telemetry
from evald.testing import FakeClock, span


def make(**cfg: object) -> tuple[TraceWindow, FakeClock, Telemetry]:
    clock = FakeClock()
    tm = Telemetry()
    config = AssemblyConfig.model_validate({"settle": 1, "decision_wait": 10, **cfg})
    return TraceWindow(config, tm, clock), clock, tm


def value(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


def big(trace: int, kib: int, span_id: str | None = None) -> SpanRecord:
    return span(f"{trace:032x}", span_id, attributes={"blob": "x" * (kib * 1024)})


def held(tm: Telemetry, store: str) -> float:
    return value(tm, "evald_assembly_held_bytes", store=store)


class Holder:
    """A sink that keeps each released trace's completion, as the pipeline does until its cases are exported."""

    def __init__(self) -> None:
        self.traces: list[AssembledTrace] = []
        self.completions: list[Completion] = []

    async def __call__(self, trace: AssembledTrace, completion: Completion) -> None:
        self.traces.append(trace)
        self.completions.append(completion)

    def done(self) -> None:
        for completion in self.completions:
            completion.release()
        self.completions.clear()


async def test_held_bytes_follow_spans_from_the_window_to_the_pipeline_and_retention() -> None:
    window, clock, tm = make(memory_limiter={"limit_mib": 8, "spike_limit_mib": 2, "retention_limit_mib": 1})
    sink = Holder()
    a, b = big(1, 300), big(2, 800)
    window.consume(SignalBatch(spans=(a, b)))
    assert held(tm, "window") == span_bytes(a) + span_bytes(b) and held(tm, "released") == 0
    assert value(tm, "evald_assembly_memory_soft_limit_bytes") == 6 * MIB
    clock.advance(1.1)
    assert await window.release_due(sink) == 2
    assert held(tm, "window") == 0 and held(tm, "released") == span_bytes(a) + span_bytes(b)
    # both retained (1 MiB cap): b alone fits, so a (the oldest) is evicted for bytes
    assert held(tm, "retained") == span_bytes(b)
    assert value(tm, "evald_assembly_retained_evicted_traces_total", reason="bytes") == 1
    sink.done()  # the pipeline finished: only what is retained stays charged
    assert held(tm, "released") == span_bytes(b) == held(tm, "retained")


async def test_retained_traces_are_dropped_first_then_new_data_is_refused_with_a_retry_hint() -> None:
    window, clock, tm = make(late_retention=100,
                             memory_limiter={"limit_mib": 4, "spike_limit_mib": 1, "retention_limit_mib": 2})
    sink = Holder()
    window.consume(SignalBatch(spans=(big(1, 900), big(2, 900))))
    clock.advance(1.1)
    await window.release_due(sink)
    sink.done()
    assert held(tm, "retained") == held(tm, "released") > 1.7 * MIB  # ~1.8 MiB retained, 3 MiB soft limit
    window.consume(SignalBatch(spans=(big(3, 1500),)))  # 3.3 MiB: the oldest retained trace goes
    assert value(tm, "evald_assembly_retained_evicted_traces_total", reason="memory_limit") == 1
    window.consume(SignalBatch(spans=(big(4, 1400),)))  # and then the other one
    assert value(tm, "evald_assembly_retained_evicted_traces_total", reason="memory_limit") == 2
    assert held(tm, "retained") == 0 and len(window) == 2
    with pytest.raises(QueueFullError, match="memory limit") as refused:
        window.consume(SignalBatch(spans=(big(5, 200), big(3, 10))))
    assert refused.value.retry_after > 0 and len(window) == 2 and len(window._pending[f"{3:032x}"].spans) == 1
    assert value(tm, "evald_assembly_refused_requests_total", reason="memory_limit") == 1
    clock.advance(1.1)
    await window.release_due(sink)  # released, but the pipeline still holds them: still charged
    with pytest.raises(QueueFullError):
        window.consume(SignalBatch(spans=(big(5, 200),)))
    sink.done()
    result = window.consume(SignalBatch(spans=(big(5, 200),)))  # room again: taken whole
    assert result.rejected_spans == 0 and list(window._pending) == [f"{5:032x}"]
    assert held(tm, "window") == span_bytes(big(5, 200)) and held(tm, "window") + held(tm, "released") <= 3 * MIB


async def test_a_request_bigger_than_the_soft_limit_is_taken_in_part_without_a_retry_hint() -> None:
    window, clock, tm = make(memory_limiter={"limit_mib": 2, "spike_limit_mib": 1, "retention_limit_mib": 0})
    result = window.consume(SignalBatch(spans=(big(1, 600), big(2, 600), big(3, 600))))
    assert result.rejected_spans == 2 and "did not fit" in result.message and len(window) == 1
    assert value(tm, "evald_assembly_refused_requests_total", reason="request_too_large") == 1
    # one trace bigger than the whole soft limit can never be taken: rejected, not retried
    result = window.consume(SignalBatch(spans=(big(4, 1100, "a" * 16), big(4, 100, "b" * 16))))
    assert result.rejected_spans == 2 and len(window) == 1


def test_config_keeps_the_spike_and_the_retention_under_the_limit() -> None:
    with pytest.raises(ValidationError, match="spike_limit_mib"):
        MemoryLimiterConfig(limit_mib=100, spike_limit_mib=100)
    with pytest.raises(ValidationError, match="retention_limit_mib"):
        MemoryLimiterConfig(limit_mib=100, spike_limit_mib=20, retention_limit_mib=90)
    default = MemoryLimiterConfig()
    assert default.limit_mib - default.spike_limit_mib >= default.retention_limit_mib


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()


@pytest.mark.integration
async def test_a_hundred_traces_with_an_8_mib_attribute_stay_within_the_byte_caps() -> None:
    """Issue 16 item 6: with the default late_retention (5000 traces) these kept 800 MB alive after scoring. Sent by
    the OTel SDK to the real HTTP receiver of a running service with the default memory limits, except
    retention_limit_mib 64 (with the default 8 a trace of 8 MiB is never retained, and only that would be seen)."""
    config = parse_config("""
receivers: { otlp: { http: { endpoint: "127.0.0.1:0" } } }
assembly: { settle: 0.1s, decision_wait: 1s, memory_limiter: { retention_limit_mib: 64 } }
metrics: [ { kind: error_free, scope: all } ]
""", "t", environ={})
    tm = Telemetry()
    service = EvaldService(config, tm, with_admin=False)
    await service.start()
    try:
        port = next(r for r in service.receivers if isinstance(r, OTLPHttpReceiver)).bound_port
        rss_before, peak_before = _rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

        def send(first: int) -> None:  # 25 traces, one request each
            provider = TracerProvider(resource=Resource.create({"service.name": "big"}))
            exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=30)
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracer = provider.get_tracer("test")
            for i in range(first, first + 25):
                with tracer.start_as_current_span("chat") as current:
                    current.set_attribute("gen_ai.operation.name", "chat")
                    current.set_attribute("blob", chr(ord("a") + i % 26) * (8 * MIB))
            provider.shutdown()

        await asyncio.gather(*(asyncio.to_thread(send, first) for first in (0, 25, 50, 75)))
        deadline = time.monotonic() + 30
        while value(tm, "evald_assembly_released_traces_total", trigger="root_settled") < 100:
            assert time.monotonic() < deadline, "the traces were not released"
            await asyncio.sleep(0.05)
        await service.pipeline.drain(10)
        retained = held(tm, "retained")
        assert 0 < retained <= 64 * MIB
        evicted = value(tm, "evald_assembly_retained_evicted_traces_total", reason="bytes")
        assert evicted >= 100 - 64 // 8 and len(service.window._retained) + evicted == 100
        assert held(tm, "window") == 0 and held(tm, "released") == retained  # nothing else still charged
        assert value(tm, "evald_receiver_accepted_spans_total", receiver="otlp", transport="http") == 100
        # generous bounds (the exact bounds are the byte counters above): without the byte cap the retained copies
        # alone were 800 MB; RSS also carries what earlier tests of the same process left to the allocator
        assert _rss() - rss_before < 512 * MIB
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before < 700 * MIB
    finally:
        await service.shutdown()
