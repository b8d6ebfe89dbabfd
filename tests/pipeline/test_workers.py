"""The scoring stage: cheap scores never wait for judged ones, acknowledgements follow both parts, and shutdown
counts every case it cannot finish (evald/pipeline/workers.py, through the pipeline that owns it)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from aiohttp import web

from evald.assembly.completion import Completion
from evald.case import Dimension, EvalCase, Score
from evald.config.loader import parse_config
from evald.exporters.acks import current_ack
from evald.exporters.file import FileExporter, FileExporterConfig
from evald.exporters.prometheus import PrometheusExporter, PrometheusExporterConfig
from evald.interfaces import MappingResult
from evald.judges.registry import close_judges
from evald.metrics.base import BaseMetric
from evald.model import AssembledTrace, Delivery, ScoredCase, SignalBatch
from evald.pipeline.accounting import shutdown_totals
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.conversations import ConversationsConfig, ConversationTracker
from evald.pipeline.engine import EvaluationPipeline, PipelineConfig
from evald.pipeline.sampling import Sampler
from evald.service import EvaldService
from evald.telemetry import Telemetry
from evald.testing import InMemoryExporter, chat_span
from tests.judges.fake_llm import FakeLLM, Reply
from tests.metrics.local_http import serve


class Cheap(BaseMetric):
    kind: ClassVar[str] = "cheap"
    family: ClassVar[str] = "test"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS

    def measure(self, eval_case: EvalCase) -> Score | None:
        return self.score(1.0, "cheap")


class SlowJudge(Cheap):
    """An asynchronous metric that answers when the test lets it (or after 5 s)."""

    kind: ClassVar[str] = "slow_judge"
    go: asyncio.Event | None = None
    started = 0

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        SlowJudge.started += 1
        assert SlowJudge.go is not None
        async with asyncio.timeout(5):
            await SlowJudge.go.wait()
        return self.score(0.5, "judged")


class ByTrace:
    """A router mapping each trace id to its own cases."""

    def __init__(self, cases: dict[str, tuple[EvalCase, ...]]) -> None:
        self.cases = cases

    def map(self, trace: AssembledTrace) -> MappingResult:
        return MappingResult(cases=self.cases[trace.trace_id])


def case(trace_id: str, service: str) -> EvalCase:
    return EvalCase(input="q", output="a", trace_id=trace_id, span_id="b" * 16, scope="llm_call",
                    service_name=service)


def tid(i: int) -> str:
    return f"{i + 1:032x}"


def build(cases: dict[str, tuple[EvalCase, ...]], exporters: Sequence[Any] = (), *, split: bool = True,
          tm: Telemetry | None = None, **cfg: Any) -> tuple[EvaluationPipeline, InMemoryExporter, Telemetry]:
    SlowJudge.go = asyncio.Event()
    SlowJudge.started = 0
    tm = tm or Telemetry()
    memory = InMemoryExporter()
    bindings = [MetricBinding(Cheap(), "all", MetricFilter()),
                MetricBinding(SlowJudge(), "all", MetricFilter.model_validate({"service_name": ["judged"]}))]
    config = PipelineConfig.model_validate({"workers": 2, "metric_timeout": 10, **cfg})
    pipe = EvaluationPipeline(config, ByTrace(cases), Sampler(1.0), bindings, [memory, *exporters], tm,  # type: ignore[arg-type]
                              split_judged=split)
    return pipe, memory, tm


def tracked(acked: list[str], name: str) -> Completion:
    delivery = Delivery(lambda: acked.append(name))
    delivery.hold()  # the window's hold for the trace, released by the completion
    delivery.seal()  # the source handed the batch on
    return Completion([delivery])


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


def names(scored: ScoredCase) -> set[str]:
    return {s.name for s in scored.scores} | {n for n, _ in scored.skipped} | {n for n, _ in scored.errors}


async def test_cases_without_a_judge_never_wait_behind_a_judged_case() -> None:
    cases = {tid(0): (case(tid(0), "judged"),), **{tid(i): (case(tid(i), "svc"),) for i in range(1, 51)}}
    pipe, memory, tm = build(cases)
    acked: list[str] = []
    await pipe.start()
    began = time.perf_counter()
    await pipe.on_trace(AssembledTrace(trace_id=tid(0), spans=()), tracked(acked, tid(0)))  # queued first
    for i in range(1, 51):
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), tracked(acked, tid(i)))
    await memory.wait_for(51, timeout=2)  # 50 cheap cases and the judged case's cheap part
    took = time.perf_counter() - began
    assert took < 0.5, f"cheap scores took {took:.3f}s"
    await asyncio.sleep(0.05)
    assert SlowJudge.started == 1  # the judge is running, not done
    assert sorted(acked) == sorted(tid(i) for i in range(1, 51))  # the judged case is not acknowledged yet
    first = next(c for c in memory.cases if c.case.trace_id == tid(0))
    assert names(first) == {"cheap"}
    assert sample(tm, "evald_scored_cases_total", scope="llm_call") == 50
    assert SlowJudge.go is not None
    SlowJudge.go.set()
    assert await pipe.drain(5)
    judged = [c for c in memory.cases if c.case.trace_id == tid(0)]
    assert [names(c) for c in judged] == [{"cheap"}, {"slow_judge"}]  # disjoint parts, cheap first
    assert [s.value for s in judged[1].scores] == [0.5]
    assert tid(0) in acked and len(acked) == 51
    assert sample(tm, "evald_scored_cases_total", scope="llm_call") == 51
    await pipe.shutdown(1)
    assert shutdown_totals(tm, pipe.no_metric).unaccounted == 0


async def test_the_source_is_acknowledged_only_after_both_parts_are_delivered() -> None:
    held: list[Delivery] = []

    class SendsLater(InMemoryExporter):
        async def export(self, batch: Sequence[ScoredCase]) -> None:
            ack = current_ack()
            assert ack is not None
            ack.hold()  # released when "delivered"
            held.append(ack)

    pipe, memory, _ = build({tid(0): (case(tid(0), "judged"),)}, [SendsLater("later")])
    acked: list[str] = []
    await pipe.start()
    await pipe.on_trace(AssembledTrace(trace_id=tid(0), spans=()), tracked(acked, "judged"))
    await memory.wait_for(1, timeout=2)
    assert SlowJudge.go is not None
    SlowJudge.go.set()
    assert await pipe.drain(5)
    assert len(memory.cases) == 2 and len(held) == 2 and not acked
    held[1].release()  # the judged part delivered first: the cheap part is still pending
    assert not acked
    held[0].release()
    assert acked == ["judged"]
    await pipe.shutdown(1)


async def test_without_split_a_judged_case_is_exported_once_and_still_does_not_block_others() -> None:
    cases = {tid(0): (case(tid(0), "judged"),), tid(1): (case(tid(1), "svc"),)}
    pipe, memory, _ = build(cases, split=False)
    await pipe.start()
    for i in (0, 1):
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), Completion([]))
    await memory.wait_for(1, timeout=2)
    assert [c.case.trace_id for c in memory.cases] == [tid(1)]
    assert SlowJudge.go is not None
    SlowJudge.go.set()
    assert await pipe.drain(5)
    assert [names(c) for c in memory.cases if c.case.trace_id == tid(0)] == [{"cheap", "slow_judge"}]
    await pipe.shutdown(1)


async def test_shutdown_counts_judged_cases_in_flight_and_releases_them() -> None:
    cases = {tid(i): (case(tid(i), "judged"),) for i in range(3)}
    pipe, memory, tm = build(cases)
    acked: list[str] = []
    await pipe.start()
    for i in range(3):
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), tracked(acked, tid(i)))
    await memory.wait_for(3, timeout=2)  # the cheap parts
    await pipe.shutdown(0.1)  # the judge never answers in time
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown_in_flight") == 3
    assert sample(tm, "evald_scored_cases_total", scope="llm_call") == 0
    assert sorted(acked) == sorted(tid(i) for i in range(3))  # released (counted), so no source is stuck
    totals = shutdown_totals(tm, pipe.no_metric)
    assert (totals.cases, totals.unaccounted, totals.dropped) == (3, 0, {"shutdown_in_flight": 3})


async def test_shutdown_counts_a_batch_a_worker_is_exporting() -> None:
    class Stuck(InMemoryExporter):
        waits_for_room = True  # no export deadline: only shutdown can interrupt it

        async def export(self, batch: Sequence[ScoredCase]) -> None:
            await asyncio.sleep(60)

    cases = {tid(i): (case(tid(i), "svc"),) for i in range(5)}
    pipe, _, tm = build(cases, [Stuck("stuck")], workers=1)
    acked: list[str] = []
    for i in range(5):  # queued before the worker starts: one batch of five
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), tracked(acked, tid(i)))
    await pipe.start()
    await asyncio.sleep(0.05)
    await pipe.shutdown(0.1)
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown_in_flight") == 5
    assert len(acked) == 5
    assert shutdown_totals(tm, pipe.no_metric).unaccounted == 0


async def test_a_trace_cut_short_while_waiting_for_room_is_counted() -> None:
    cases = {tid(0): tuple(case(tid(0), "svc") for _ in range(4))}
    pipe, _, tm = build(cases, queue_size=1)
    acked: list[str] = []
    feeding = asyncio.create_task(pipe.on_trace(AssembledTrace(trace_id=tid(0), spans=()), tracked(acked, "t")))
    await asyncio.sleep(0.05)  # one case queued, the second waits for room (no worker started)
    feeding.cancel()
    await asyncio.gather(feeding, return_exceptions=True)
    assert sample(tm, "evald_cases_total", scope="llm_call") == 4
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown") == 3  # the waiting one and the two after it
    assert not acked  # the queued case still holds the trace
    await pipe.shutdown(0.05)
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown") == 4
    assert acked == ["t"]
    totals = shutdown_totals(tm, pipe.no_metric)
    assert (totals.cases, totals.unaccounted) == (4, 0)
    assert "cases 4 = scored 0 + dropped 4 (shutdown 4)" in totals.line() and totals.alarming


async def test_a_real_judge_answering_after_5s_does_not_hold_back_50_cases_without_one() -> None:
    """Through the service's window and pipeline, the real openai SDK judging one case against a stand-in that
    answers after 5 s: the 50 cases without a judge and the judged case's cheap score are exported at once."""
    llm = FakeLLM(default=Reply(delay=5.0))
    asked = asyncio.Event()

    async def handle(request: web.Request) -> web.StreamResponse:
        asked.set()
        return await llm.handle(request)

    async with serve(handle) as server:
        llm.server = server
        config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
pipeline: {{ workers: 2, metric_timeout: 20s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: sk-test-not-a-real-key, base_url: "{server.base_url}/v1",
             timeout: 10s, max_retries: 0, cache: {{ enabled: false }} }}
metrics:
  - {{ kind: error_free, scope: llm_call }}
  - {{ kind: answer_relevancy, scope: llm_call, filter: {{ service_name: [judged] }} }}
""")
        memory = InMemoryExporter("split")
        service = EvaldService(config, Telemetry(), with_receivers=False, with_admin=False,
                               configured_exporters=False, extra_exporters=[memory])
        await service.pipeline.start()
        spans = [chat_span(trace_id=tid(i), service_name="judged" if i == 0 else "plain") for i in range(51)]
        try:
            service.window.consume(SignalBatch(spans=tuple(spans)))
            began = time.perf_counter()
            await service.window.flush(service.pipeline.on_trace)
            await memory.wait_for(51, timeout=2)
            took = time.perf_counter() - began
            assert took < 0.5, f"cheap scores took {took:.3f}s"
            assert all(names(c) == {"error_free"} for c in memory.cases)
            await asyncio.wait_for(asked.wait(), 2)  # the judge's request reached the stand-in (answers in 5 s)
            assert len(memory.cases) == 51 and llm.in_flight == 1
        finally:
            await service.pipeline.shutdown(0.1)
    await asyncio.wait_for(close_judges(), 5)
    sample = service.telemetry.registry.get_sample_value
    assert sample("evald_scored_cases_total", {"scope": "llm_call"}) == 50
    assert sample("evald_cases_dropped_total", {"reason": "shutdown_in_flight"}) == 1


async def test_exporters_count_a_case_exported_in_two_parts_once_per_metric(tmp_path: Path) -> None:
    """The real Prometheus exporter counts each metric of the split case once; the file exporter writes one line per
    part, same case, disjoint metrics; the source is acknowledged once both lines are written."""
    tm = Telemetry()
    prometheus = PrometheusExporter(PrometheusExporterConfig(), tm)
    file = FileExporter(FileExporterConfig(path=str(tmp_path / "scores.jsonl"), flush_interval=0.05), tm)
    pipe, _, _ = build({tid(0): (case(tid(0), "judged"),)}, [prometheus, file], tm=tm)
    acked: list[str] = []
    await file.start()
    await pipe.start()
    await pipe.on_trace(AssembledTrace(trace_id=tid(0), spans=()), tracked(acked, "t"))
    assert SlowJudge.go is not None
    SlowJudge.go.set()
    assert await pipe.drain(5)
    await file.shutdown(2)
    assert acked == ["t"]

    def evaluations(metric: str) -> float:
        return sum(tm.registry.get_sample_value("evald_evaluations_total", {
            "metric": metric, "outcome": outcome, "dimension": "correctness", "scope": "llm_call",
            "service_name": "judged", "model": ""}) or 0.0 for outcome in ("pass", "fail", "skipped", "error"))

    assert (evaluations("cheap"), evaluations("slow_judge")) == (1.0, 1.0)
    lines = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [[s["name"] for s in line["scores"]] for line in lines] == [["cheap"], ["slow_judge"]]
    assert {(line["trace_id"], line["span_id"], line["scope"]) for line in lines} == {(tid(0), "b" * 16, "llm_call")}
    await pipe.shutdown(1)


async def test_conversations_flushed_at_shutdown_are_queued_or_counted() -> None:
    tm = Telemetry()
    turns = {tid(i): (EvalCase(input="q", output="a", trace_id=tid(i), span_id="c" * 16, scope="trace",
                               metadata={"conversation_id": f"conv-{i}"}),) for i in range(3)}
    config = PipelineConfig.model_validate({"workers": 1, "queue_size": 1})
    binding = MetricBinding(Cheap(), "conversation", MetricFilter())
    pipe = EvaluationPipeline(config, ByTrace(turns), Sampler(1.0), [binding], [InMemoryExporter()], tm,  # type: ignore[arg-type]
                              conversations=ConversationTracker(ConversationsConfig(), tm))
    for i in range(3):  # three open conversations; no worker runs, so the queue holds one case
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), Completion([]))
    await pipe.shutdown(0.1)
    assert sample(tm, "evald_cases_total", scope="conversation") == 3
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown") == 3  # one queued, two cut short
    totals = shutdown_totals(tm, pipe.no_metric)
    assert (totals.cases, totals.no_metric, totals.unaccounted) == (6, 3, 0)  # the turns have no metric of their own


class NotApplicable(Cheap):
    kind: ClassVar[str] = "not_applicable_here"

    def measure(self, eval_case: EvalCase) -> Score | None:
        return None


async def test_skips_of_inline_scored_batches_are_all_counted() -> None:
    """score_inline adds skips up and the worker adds them to the counter once per batch: none is lost."""
    tm = Telemetry()
    cases = {tid(i): (case(tid(i), "svc"),) for i in range(40)}
    config = PipelineConfig.model_validate({"workers": 2, "metric_timeout": 10})
    pipe = EvaluationPipeline(config, ByTrace(cases), Sampler(1.0),  # type: ignore[arg-type]
                              [MetricBinding(NotApplicable(name="na"), "all", MetricFilter())], [], tm)
    await pipe.start()
    for i in range(40):
        await pipe.on_trace(AssembledTrace(trace_id=tid(i), spans=()), tracked([], tid(i)))
    assert await pipe.drain(5)
    assert sample(tm, "evald_metric_skips_total", metric="na", reason="not_applicable") == 40
    await pipe.shutdown(1)
