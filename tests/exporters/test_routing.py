"""``pipelines:``: which exporters receive which scores, its config validation, and the service wiring."""

from __future__ import annotations

import pytest

from evald.case import Dimension, EvalCase, Score
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.exporters.langfuse import LangfuseExporter
from evald.exporters.memory import InMemoryExporter
from evald.exporters.routing import ExportPipelineConfig, FilteredExporter, ScoreFilter, route_exporters
from evald.model import ScoredCase
from evald.service import EvaldService
from evald.telemetry import Telemetry

SAFETY, PERF = Dimension.SAFETY, Dimension.PERFORMANCE


def batch() -> list[ScoredCase]:
    def case(service: str | None, scope: str = "trace") -> EvalCase:
        return EvalCase(trace_id="ab" * 16, span_id="cd" * 8, scope=scope, service_name=service)  # type: ignore[arg-type]

    return [
        ScoredCase(case("checkout-api"), (Score("faithfulness", 0.9, 0.7),
                                          Score("pii_leak", 1.0, 1.0, dimension=SAFETY),
                                          Score("latency", 0.1, 0.5, dimension=PERF)),
                   skipped=(("tool_called", "not_applicable"),), errors=(("geval", "timeout"),),
                   metric_dimensions={"tool_called": "trajectory", "geval": "correctness"}),
        ScoredCase(case("search", "llm_call"), (Score("faithfulness", 0.4, 0.7),)),
        ScoredCase(case(None), (Score("latency", 1.0, 0.5, dimension=PERF),)),
    ]


def pipeline(exporters: list[str], **flt: list[str]) -> ExportPipelineConfig:
    return ExportPipelineConfig(exporters=exporters, filter=ScoreFilter.model_validate(flt))


async def routed(pipelines: list[ExportPipelineConfig] | None, *ids: str) -> dict[str, list[ScoredCase]]:
    sinks = [InMemoryExporter(i) for i in ids]
    for exporter in route_exporters(sinks, pipelines):
        await exporter.export(batch())
    return {s.id: s.cases for s in sinks}


def names(cases: list[ScoredCase]) -> list[list[str]]:
    return [[s.name for s in c.scores] for c in cases]


async def test_without_pipelines_every_exporter_gets_everything() -> None:
    sinks = [InMemoryExporter("a")]
    assert route_exporters(sinks, None) == sinks
    got = await routed(None, "a")
    assert got["a"] == batch()


async def test_filters_select_scores_by_metric_dimension_service_and_scope() -> None:
    got = await routed([pipeline(["a"], metric=["faith*"])], "a")
    assert names(got["a"]) == [["faithfulness"], ["faithfulness"]]
    assert got["a"][0].skipped == () and got["a"][0].errors == ()

    got = await routed([pipeline(["a"], dimension=["safety", "trajectory"])], "a")
    assert names(got["a"]) == [["pii_leak"]]
    assert got["a"][0].skipped == (("tool_called", "not_applicable"),)  # skipped entries follow their metric

    got = await routed([pipeline(["a"], service_name=["checkout-*"])], "a")
    assert got["a"] == batch()[:1]  # the whole case, untouched

    got = await routed([pipeline(["a"], scope=["llm_call"])], "a")
    assert names(got["a"]) == [["faithfulness"]]

    got = await routed([pipeline(["a"], service_name=["*"], metric=["latency"])], "a")
    assert names(got["a"]) == [["latency"], ["latency"]]  # `*` matches a case without service.name


async def test_an_exporter_in_several_pipelines_gets_the_union_and_one_in_none_gets_nothing() -> None:
    pipes = [pipeline(["a", "b"], metric=["pii_leak"]), pipeline(["a"], scope=["llm_call"])]
    got = await routed(pipes, "a", "b", "c")
    assert names(got["a"]) == [["pii_leak"], ["faithfulness"]]
    assert names(got["b"]) == [["pii_leak"]]
    assert got["c"] == []


def test_a_pipeline_naming_an_unconfigured_exporter_is_a_config_error_with_its_path() -> None:
    text = """
exporters:
  debug: {}
  file/audit: { path: /tmp/x.jsonl }
pipelines:
  - exporters: [debug]
  - exporters: [file/audit, langfuse/prod]
    filter: { metric: ["*"], colour: [red] }
"""
    with pytest.raises(ConfigError) as err:
        parse_config(text, "t", environ={})
    problems = dict(err.value.problems)
    assert "not configured under `exporters` (configured: debug, file/audit)" in problems["pipelines[1].exporters[1]"]
    assert problems["pipelines[1].filter.colour"] == "unknown key (not allowed here)"
    assert len(problems) == 2


def test_pipelines_may_name_the_default_exporter_and_must_not_be_empty() -> None:
    resolved = parse_config("pipelines: [{exporters: [prometheus], filter: {scope: [trace]}}]", "t", environ={})
    assert resolved.root.pipelines is not None and resolved.root.pipelines[0].exporters == ["prometheus"]
    with pytest.raises(ConfigError) as err:
        parse_config("pipelines: []", "t", environ={})
    assert err.value.problems[0][0] == "pipelines"
    with pytest.raises(ConfigError) as err:
        parse_config("pipelines: [{exporters: []}]", "t", environ={})
    assert err.value.problems[0][0] == "pipelines[0].exporters"
    with pytest.raises(ConfigError):
        parse_config("pipelines: [{exporters: [debug], filter: {scope: [span]}}]\nexporters: {debug: {}}", "t",
                     environ={})


async def test_the_service_wraps_configured_exporters_and_tells_them_metric_facts() -> None:
    text = """
receivers: {}
exporters:
  debug: {}
  langfuse/prod: { public_key: pk, secret_key: sk }
pipelines:
  - exporters: [langfuse/prod]
    filter: { dimension: [performance] }
metrics:
  - { kind: error_free, scope: all }
  - { kind: latency, name: latency_strict, options: { max_ms: 500 } }
"""
    memory = InMemoryExporter("replay")
    service = EvaldService(parse_config(text, "t", environ={}), Telemetry(), with_receivers=False, with_admin=False,
                           extra_exporters=[memory])
    assert service.exporters[0] is memory  # extra exporters are not filtered
    wrapped = {e.id: e for e in service.exporters[1:]}
    assert set(wrapped) == {"debug", "langfuse/prod"}
    assert all(isinstance(e, FilteredExporter) for e in wrapped.values())
    langfuse = wrapped["langfuse/prod"]
    assert isinstance(langfuse, FilteredExporter) and isinstance(langfuse.inner, LangfuseExporter)
    infos = langfuse.inner._infos
    assert infos["error_free"].boolean and infos["error_free"].kind == "error_free"
    assert not infos["latency_strict"].boolean and infos["latency_strict"].kind == "latency"
    assert infos["latency_strict"].version == "1" and infos["latency_strict"].dimension == "performance"
    await service.shutdown()
