"""The pipeline's hook: multi-case metrics never reach the scorer, a composite over a judged (asynchronous) metric
is exported once both parts of the case were, a group is scored across traces, and a case only multi-case metrics
apply to still reaches them."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from evald.assembly.completion import Completion
from evald.case import Dimension, EvalCase, Score
from evald.interfaces import MappingResult
from evald.metrics.base import BaseMetric
from evald.metrics.registry import get_metric_class
from evald.model import AssembledTrace
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.engine import EvaluationPipeline, PipelineConfig
from evald.pipeline.sampling import Sampler
from evald.telemetry import Telemetry
from evald.testing import InMemoryExporter
from evald.windowed.stage import WindowedStage


class Cheap(BaseMetric):
    kind: ClassVar[str] = "cheap"
    family: ClassVar[str] = "test"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS

    def measure(self, eval_case: EvalCase) -> Score | None:
        return self.score(1.0, "cheap")


class Judged(Cheap):
    kind: ClassVar[str] = "judged"

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        await asyncio.sleep(0.05)
        return self.score(0.6, "judged")


class Router:
    def map(self, trace: AssembledTrace) -> MappingResult:
        return MappingResult(cases=(EvalCase(input="same probe", output="Paris", trace_id=trace.trace_id,
                                             span_id="a" * 16, service_name="svc"),))


def bind(metric: BaseMetric) -> MetricBinding:
    return MetricBinding(metric, "all", MetricFilter())


def multi(kind: str, **options: object) -> MetricBinding:
    return bind(get_metric_class(kind)(options=options))


async def run(bindings: list[MetricBinding], traces: int) -> tuple[InMemoryExporter, Telemetry]:
    tm, exporter = Telemetry(), InMemoryExporter()
    pipe = EvaluationPipeline(PipelineConfig(workers=1), Router(), Sampler(1.0), bindings, [exporter], tm)  # type: ignore[arg-type]
    await pipe.start()
    for i in range(traces):
        await pipe.on_trace(AssembledTrace(trace_id=f"{i + 1:032x}", spans=()), Completion([]))
    assert await pipe.drain(5)
    await pipe.shutdown(1)
    return exporter, tm


async def test_composite_waits_for_the_judged_part_and_groups_span_traces() -> None:
    exporter, tm = await run([bind(Cheap()), bind(Judged()),
                              multi("composite", weights={"cheap": 1, "judged": 3}),
                              multi("outcome_consistency", group_by="input", k=2)], traces=2)
    by_name: dict[str, list[tuple[str, Score]]] = {}
    for scored in exporter.cases:
        for score in scored.scores:
            by_name.setdefault(score.name, []).append((scored.trace_id, score))
    assert len(by_name["cheap"]) == len(by_name["judged"]) == 2  # split: cheap and judged parts exported apart
    assert [s.value for _, s in by_name["composite"]] == pytest.approx([(1.0 + 3 * 0.6) / 4] * 2)
    ((trace_id, group),) = by_name["outcome_consistency"]
    assert group.value == 1.0 and group.metadata["trace_ids"][-1] == trace_id
    # the scorer never ran the multi-case metrics: no skip (per case) and no duration recorded for them
    assert not any(name in ("composite", "outcome_consistency") for sc in exporter.cases for name, _ in sc.skipped)
    assert tm.registry.get_sample_value("evald_metric_duration_seconds_count", {"metric": "composite"}) is None
    assert tm.registry.get_sample_value("evald_metric_duration_seconds_count", {"metric": "cheap"}) == 2


async def test_a_case_with_only_multi_case_metrics_reaches_them() -> None:
    exporter, _ = await run([multi("outcome_consistency", group_by="input", k=3)], traces=3)
    scores = [s for scored in exporter.cases for s in scored.scores]
    assert [s.name for s in scores] == ["outcome_consistency"] and scores[0].value == 1.0


async def test_without_multi_case_metrics_there_is_no_windowed_stage() -> None:
    stage, single = WindowedStage.split([bind(Cheap())], Telemetry())
    assert stage is None and [b.metric.name for b in single] == ["cheap"]
    exporter, tm = await run([bind(Cheap())], traces=2)  # nothing windowed is built: no hook runs per case or batch
    assert [s.name for sc in exporter.cases for s in sc.scores] == ["cheap", "cheap"]
    assert tm.registry.get_sample_value("evald_windowed_pending_cases") is None
