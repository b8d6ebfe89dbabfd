from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, ClassVar

import pytest

from evald.assembly.completion import Completion
from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.explorer.server import ExplorerExporter
from evald.exporters.prometheus import PrometheusExporter
from evald.interfaces import MappingResult, NotEvaluable
from evald.metrics.base import BaseMetric
from evald.model import AssembledTrace, Delivery
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.engine import EvaluationPipeline, PipelineConfig
from evald.pipeline.sampling import Sampler, trace_bucket
from evald.telemetry import Telemetry
from evald.testing import InMemoryExporter, span

T1 = "0af7651916cd43dd8448eb211c80319c"


class Always(BaseMetric):
    kind: ClassVar[str] = "always"
    family: ClassVar[str] = "test"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS

    def measure(self, eval_case: EvalCase) -> Score | None:
        return self.score(1.0 if eval_case.output else 0.0, "has output")


class NeverApplies(Always):
    kind: ClassVar[str] = "never"

    def measure(self, eval_case: EvalCase) -> Score | None:
        return None


class Explodes(Always):
    kind: ClassVar[str] = "explodes"

    def measure(self, eval_case: EvalCase) -> Score | None:
        raise RuntimeError("boom")


class Hangs(Always):
    kind: ClassVar[str] = "hangs"

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        await asyncio.sleep(60)
        return None


class FakeRouter:
    def __init__(self, result: MappingResult) -> None:
        self.result = result

    def map(self, trace: AssembledTrace) -> MappingResult:
        return self.result


def case(scope: str = "trace", output: Any = "Paris", service: str = "svc") -> EvalCase:
    return EvalCase(input="q", output=output, trace_id=T1, span_id="a" * 16, scope=scope,  # type: ignore[arg-type]
                    service_name=service)


def bind(metric: BaseMetric, scope: str = "all", **flt: Any) -> MetricBinding:
    return MetricBinding(metric, scope, MetricFilter.model_validate(flt))


def make(result: MappingResult, bindings: list[MetricBinding], ratio: float = 1.0, **cfg: Any):  # type: ignore[no-untyped-def]
    tm = Telemetry()
    exporter = InMemoryExporter()
    config = PipelineConfig.model_validate({"workers": 2, "metric_timeout": 0.2, **cfg})
    pipe = EvaluationPipeline(config, FakeRouter(result), Sampler(ratio), bindings, [exporter], tm)  # type: ignore[arg-type]
    return pipe, exporter, tm


def trace() -> AssembledTrace:
    return AssembledTrace(trace_id=T1, spans=())


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


async def test_scores_skips_and_errors_are_kept_apart() -> None:
    pipe, exporter, tm = make(
        MappingResult(cases=(case(),)),
        [bind(Always()), bind(NeverApplies()), bind(Explodes()), bind(Hangs())],
    )
    await pipe.start()
    await pipe.on_trace(trace(), Completion([]))
    await exporter.wait_for(2, timeout=5)  # the cheap part, then the judged part of the same case
    cheap, judged = exporter.cases
    assert [s.name for s in cheap.scores] == ["always"]
    assert cheap.skipped == (("never", "not_applicable"),)
    assert dict(cheap.errors).keys() == {"explodes"} and "boom" in dict(cheap.errors)["explodes"]
    assert judged.case is cheap.case and not judged.scores and not judged.skipped
    assert dict(judged.errors).keys() == {"hangs"} and "timed out" in dict(judged.errors)["hangs"]
    assert sample(tm, "evald_metric_errors_total", metric="explodes", reason="exception") == 1
    assert sample(tm, "evald_metric_errors_total", metric="hangs", reason="timeout") == 1
    await pipe.shutdown(1)


async def test_scope_and_filter_select_metrics() -> None:
    cases = (case("trace", service="checkout"), case("llm_call", service="checkout"), case("trace", service="search"))
    pipe, exporter, _ = make(
        MappingResult(cases=cases),
        [bind(Always(), "llm_call"), bind(Always(name="only_checkout"), "trace", service_name=["check*"])],
    )
    await pipe.start()
    await pipe.on_trace(trace(), Completion([]))
    assert await pipe.drain(5)
    got = sorted((c.case.scope, c.case.service_name, tuple(s.name for s in c.scores)) for c in exporter.cases)
    assert got == [("llm_call", "checkout", ("always",)), ("trace", "checkout", ("only_checkout",))]
    await pipe.shutdown(1)


async def test_delivery_is_acknowledged_after_export() -> None:
    acked: list[bool] = []
    delivery = Delivery(lambda: acked.append(True))
    delivery.hold()  # the window's hold for this trace
    delivery.seal()
    pipe, exporter, _ = make(MappingResult(cases=(case(), case("llm_call"))), [bind(Always())])
    await pipe.on_trace(trace(), Completion([delivery]))
    assert not acked  # queued, not exported yet
    await pipe.start()
    assert await pipe.drain(5)
    assert acked == [True] and len(exporter.cases) == 2
    await pipe.shutdown(1)


async def test_not_evaluable_and_ignored_traces_are_counted() -> None:
    items = (NotEvaluable("no_output", "genai_semconv"), NotEvaluable("no_input", "openinference", scope="llm_call"),
             NotEvaluable("no_output", "genai_semconv"))
    pipe, exporter, tm = make(MappingResult(not_evaluable=items), [])
    await pipe.on_trace(trace(), Completion([]))
    await pipe.on_trace(trace(), Completion([]))  # the label sets' children are kept: counted on, not replaced
    assert sample(tm, "evald_cases_not_evaluable_total", reason="no_output", convention="genai_semconv",
                  scope="trace") == 4
    assert sample(tm, "evald_cases_not_evaluable_total", reason="no_input", convention="openinference",
                  scope="llm_call") == 2
    pipe2, _, tm2 = make(MappingResult(), [])
    await pipe2.on_trace(trace(), Completion([]))
    await pipe2.on_trace(trace(), Completion([]))
    assert sample(tm2, "evald_traces_ignored_total", reason="no_genai_spans") == 2


async def test_sampling_is_deterministic_per_trace() -> None:
    ratio = 0.5
    expected = trace_bucket(T1) < ratio
    pipe, exporter, tm = make(MappingResult(cases=(case(),)), [bind(Always())], ratio=ratio)
    await pipe.start()
    for _ in range(3):
        await pipe.on_trace(trace(), Completion([]))
    assert await pipe.drain(5)
    assert len(exporter.cases) == (3 if expected else 0)
    assert sample(tm, "evald_cases_sampled_out_total", scope="trace") == (0 if expected else 3)
    assert sample(tm, "evald_cases_total", scope="trace") == 3  # counted whether sampled or not
    await pipe.shutdown(1)


def test_sampler_ratio_is_respected_over_many_traces() -> None:
    sampler = Sampler(0.2)
    ids = [f"{i:032x}" for i in range(20000)]
    share = sum(sampler.sampled(t) for t in ids) / len(ids)
    assert 0.18 < share < 0.22


async def test_full_queue_applies_backpressure_and_failing_exporter_is_counted() -> None:
    class Broken(InMemoryExporter):
        async def export(self, batch):  # type: ignore[no-untyped-def]
            raise ConnectionError("down")

    tm = Telemetry()
    ok = InMemoryExporter("ok")
    pipe = EvaluationPipeline(
        PipelineConfig(workers=1, queue_size=1), FakeRouter(MappingResult(cases=(case(), case(), case()))),  # type: ignore[arg-type]
        Sampler(1.0), [bind(Always())], [Broken("broken"), ok], tm,
    )
    feeding = asyncio.create_task(pipe.on_trace(trace(), Completion([])))
    await asyncio.sleep(0.05)
    assert not feeding.done()  # blocked on the full queue: backpressure, not a drop
    await pipe.start()
    await asyncio.wait_for(feeding, 5)
    assert await pipe.drain(5)
    assert len(ok.cases) == 3
    assert sample(tm, "evald_exporter_send_failed_cases_total", exporter="broken", reason="ConnectionError") == 3
    await pipe.shutdown(1)


@pytest.mark.parametrize("in_memory", [False, True])
async def test_exporters_in_memory_get_no_deadline_and_their_failures_are_counted(in_memory: bool) -> None:
    """An exporter flagged ``in_memory`` (records in memory, never waits) is called without an asyncio.timeout; an
    exception from it is still counted. Without the flag a slow export is cut at ``export_timeout``."""

    class Slow(InMemoryExporter):
        async def export(self, batch):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.2)  # an in-memory exporter never does this: it shows whether a deadline is set
            await super().export(batch)

    class Broken(InMemoryExporter):
        async def export(self, batch):  # type: ignore[no-untyped-def]
            raise ValueError("bug")

    slow, broken = Slow("slow"), Broken("broken")
    slow.in_memory = broken.in_memory = in_memory  # type: ignore[attr-defined]
    tm = Telemetry()
    pipe = EvaluationPipeline(
        PipelineConfig(workers=1, export_timeout=0.05), FakeRouter(MappingResult(cases=(case(),))),  # type: ignore[arg-type]
        Sampler(1.0), [bind(Always())], [slow, broken], tm,
    )
    await pipe.start()
    await pipe.on_trace(trace(), Completion([]))
    assert await pipe.drain(5)
    assert len(slow.cases) == (1 if in_memory else 0)
    assert sample(tm, "evald_exporter_send_failed_cases_total", exporter="slow", reason="timeout") == (
        0 if in_memory else 1)
    assert sample(tm, "evald_exporter_send_failed_cases_total", exporter="broken", reason="ValueError") == 1
    await pipe.shutdown(1)


def test_the_prometheus_table_and_the_explorer_are_in_memory_exporters() -> None:
    assert PrometheusExporter.in_memory and ExplorerExporter.in_memory


async def test_shutdown_drops_and_counts_what_cannot_drain() -> None:
    pipe, exporter, tm = make(MappingResult(cases=(case(),)), [bind(Always())], queue_size=5)
    await pipe.on_trace(trace(), Completion([]))  # never started: nothing will drain
    await pipe.shutdown(0.05)
    assert sample(tm, "evald_cases_dropped_total", reason="shutdown") == 1


def test_metric_options_are_validated() -> None:
    class WithOptions(Always):
        class Options(ComponentConfig):
            limit: int = 3

    with pytest.raises(ValueError):
        WithOptions(options={"limit": "many"})
    assert WithOptions(options={"limit": 5}).options.limit == 5  # type: ignore[attr-defined]


async def test_cases_of_a_reopened_trace_carry_its_revision() -> None:
    pipe, exporter, _ = make(MappingResult(cases=(case(),)), [bind(Always())])
    await pipe.start()
    await pipe.on_trace(AssembledTrace(trace_id=T1, spans=(), revision=2), Completion([]))
    await pipe.on_trace(trace(), Completion([]))
    await exporter.wait_for(2, timeout=5)
    assert sorted(c.case.metadata.get("revision", 1) for c in exporter.cases) == [1, 2]
    await pipe.shutdown(1)


async def test_cases_carry_their_span_end_time_unless_the_mapper_set_one() -> None:
    evaluated = span(T1, "a" * 16, start_ms=5, duration_ms=20)
    own = replace(case("llm_call"), metadata={"span_end_unix_nano": 1})
    pipe, exporter, _ = make(MappingResult(cases=(case(), own)), [bind(Always())])
    await pipe.start()
    await pipe.on_trace(AssembledTrace(trace_id=T1, spans=(evaluated, span(T1, "b" * 16))), Completion([]))
    await exporter.wait_for(2, timeout=5)
    ends = sorted(c.case.metadata["span_end_unix_nano"] for c in exporter.cases)
    assert ends == [1, evaluated.end_time_unix_nano]
    assert not any("revision" in c.case.metadata for c in exporter.cases)  # first release: no revision fact
    await pipe.shutdown(1)


def test_facts_are_added_to_a_copy_that_keeps_every_other_field() -> None:
    from dataclasses import fields

    from evald.pipeline.engine import _with_facts

    values: dict[str, Any] = {f.name: object() for f in fields(EvalCase)}  # a distinct marker per field
    values["metadata"] = {"convention": "x"}
    original = EvalCase(**values)
    copy = _with_facts(original, {"span_end_unix_nano": 7})
    assert copy is not original
    assert copy.metadata == {"convention": "x", "span_end_unix_nano": 7}
    assert original.metadata == {"convention": "x"}  # the mapper's case is never changed
    assert all(getattr(copy, f.name) is values[f.name] for f in fields(EvalCase) if f.name != "metadata")


async def test_the_time_cases_wait_in_the_queue_is_a_histogram() -> None:
    pipe, exporter, tm = make(MappingResult(cases=(case(), case("llm_call"))), [bind(Always())])
    queued = asyncio.get_running_loop().time()
    await pipe.on_trace(trace(), Completion([]))  # two cases queued, no worker yet
    await asyncio.sleep(0.2)  # the wait being measured, not a synchronisation
    await pipe.start()
    assert await pipe.drain(5)
    waited = asyncio.get_running_loop().time() - queued
    assert len(exporter.cases) == 2
    assert sample(tm, "evald_queue_wait_seconds_count") == 2
    assert sample(tm, "evald_queue_wait_seconds_bucket", le="0.1") == 0  # both waited for the workers to start
    assert sample(tm, "evald_queue_wait_seconds_bucket", le="+Inf") == 2
    assert 2 * 0.2 <= sample(tm, "evald_queue_wait_seconds_sum") <= 2 * waited
    await pipe.shutdown(1)
