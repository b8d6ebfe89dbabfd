"""Asynchronous group metrics (e.g. a judge comparing two variants' outputs): measured in tasks of their own,
exported when done through the pipeline, bounded, timed out and drained at shutdown, every loss counted."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from evald.assembly.completion import Completion
from evald.case import Dimension, EvalCase, Score
from evald.interfaces import MappingResult
from evald.metrics.multi_case import GroupMetric as Base
from evald.metrics.multi_case import GroupOptions, Run
from evald.metrics.registry import get_metric_class
from evald.model import AssembledTrace, ScoredCase
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.engine import EvaluationPipeline, PipelineConfig
from evald.pipeline.sampling import Sampler
from evald.telemetry import Telemetry
from evald.testing import InMemoryExporter
from evald.windowed.judged import GroupJudge


class SameAnswerMetric(Base):
    """1 when the two runs of a group answered the same, after an awaited comparison (a judge stand-in)."""

    kind: ClassVar[str] = "same_answer"
    family: ClassVar[str] = "test"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    delay: ClassVar[float] = 0.02

    async def a_measure_group(self, runs: Sequence[Run]) -> Score | None:
        await asyncio.sleep(self.delay)
        return self.score(float(len({r.case.output for r in runs}) == 1), "compared")


class SlowMetric(SameAnswerMetric):
    kind: ClassVar[str] = "slow"
    delay: ClassVar[float] = 60.0


class Router:
    def __init__(self) -> None:
        self.outputs = iter(["Paris", "Paris", "Paris", "Lyon"])

    def map(self, trace: AssembledTrace) -> MappingResult:
        return MappingResult(cases=(EvalCase(input="probe", output=next(self.outputs), trace_id=trace.trace_id,
                                             span_id="b" * 16),))


async def run(metric: Base, timeout: float) -> tuple[list[ScoredCase], Telemetry]:
    """Four traces of one probe through the pipeline with ``metric`` and a synchronous group metric beside it."""
    tm, exporter = Telemetry(), InMemoryExporter()
    config = PipelineConfig(workers=1, metric_timeout=timeout)
    consistency = get_metric_class("outcome_consistency")(options={"group_by": "input", "k": 2})
    bindings = [MetricBinding(m, "all", MetricFilter()) for m in (metric, consistency)]
    pipe = EvaluationPipeline(config, Router(), Sampler(1.0), bindings, [exporter], tm)  # type: ignore[arg-type]
    await pipe.start()
    for i in range(4):
        await pipe.on_trace(AssembledTrace(trace_id=f"{i + 1:032x}", spans=()), Completion([]))
    assert await pipe.drain(5)
    await pipe.shutdown(1)
    sync = [sc for sc in exporter.cases if sc.scores and sc.scores[0].name == "outcome_consistency"]
    assert [sc.scores[0].value for sc in sync] == [1.0, 0.5]  # its own runs only: never the async group scores
    return [sc for sc in exporter.cases if sc.scores and sc.scores[0].name != "outcome_consistency"], tm


def dropped(tm: Telemetry, metric: str, reason: str) -> float | None:
    return tm.registry.get_sample_value("evald_windowed_dropped_total", {"metric": metric, "reason": reason})


async def test_async_group_scores_are_exported_when_measured() -> None:
    metric = SameAnswerMetric(options=GroupOptions(group_by="input", k=2))
    assert metric.group_is_async and not Base.group_is_async
    results, _ = await run(metric, timeout=5)
    assert sorted((sc.trace_id[-1], sc.scores[0].value) for sc in results) == [("2", 1.0), ("4", 0.0)]
    assert all(sc.scores[0].reason == "group of 2 runs: compared" for sc in results)


async def test_a_slow_group_metric_times_out_counted() -> None:
    results, tm = await run(SlowMetric(options=GroupOptions(group_by="input", k=2)), timeout=0.05)
    assert results == [] and dropped(tm, "slow", "timeout") == 4  # two groups of two runs


async def test_busy_and_shutdown_are_counted() -> None:
    counts: dict[tuple[str, str], int] = {}
    exported: list[ScoredCase] = []

    def count(name: str, reason: str, n: int) -> None:
        counts[(name, reason)] = counts.get((name, reason), 0) + n

    async def export(batch: Sequence[ScoredCase]) -> None:
        exported.extend(batch)

    judge = GroupJudge(count, max_tasks=1)
    metric = SlowMetric(options=GroupOptions(group_by="input", k=2))
    runs = [Run(EvalCase(output="x")), Run(EvalCase(output="x"))]
    judge.start(metric, runs, runs[-1].case, lambda *a: exported[0])  # not bound yet: nowhere to export
    assert counts == {("slow", "busy"): 2}
    judge.bind(export, timeout=60)
    judge.start(metric, runs, runs[-1].case, lambda *a: exported[0])
    judge.start(metric, runs, runs[-1].case, lambda *a: exported[0])  # beyond max_tasks
    assert counts[("slow", "busy")] == 4 and judge.in_flight == 1
    await judge.drain(0.05)
    assert counts[("slow", "shutdown")] == 1 and judge.in_flight == 0 and exported == []
