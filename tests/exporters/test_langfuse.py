"""Langfuse exporter against a local HTTP server: bodies checked with the Langfuse SDK's own models, auth, ids."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase, Score
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.exporters.langfuse import LangfuseExporter, LangfuseExporterConfig
from evald.exporters.langfuse_scores import SCORE_NAMESPACE
from evald.exporters.routing import metric_infos
from evald.model import ScoredCase
from evald.pipeline.bindings import MetricSpec, build_bindings
from evald.replay import replay
from evald.telemetry import Telemetry
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, Planned, sdk_validate

pytestmark = pytest.mark.integration

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT, CALL = "00f067aa0ba902b7", "eee19b7ec3c1b174"
METRICS = [MetricSpec(kind="error_free", scope="all"), MetricSpec(kind="latency", options={"max_ms": 1000}),
           MetricSpec(kind="json_valid", scope="llm_call"), MetricSpec(kind="turn_count", scope="conversation")]
INFOS = metric_infos(build_bindings(METRICS))


@pytest.fixture
async def server() -> AsyncIterator[FakeLangfuse]:
    fake = await FakeLangfuse().start()
    yield fake
    await fake.stop()


def config(server: FakeLangfuse, **overrides: Any) -> LangfuseExporterConfig:
    raw: dict[str, Any] = {
        "host": server.url, "public_key": PUBLIC_KEY, "secret_key": SECRET_KEY, "environment": "staging",
        "rate_limit_per_minute": 0, "retry_on_failure": {"initial_interval": "20ms", "max_interval": "100ms"},
    }
    return LangfuseExporterConfig.model_validate({**raw, **overrides})


def sample(tm: Telemetry, name: str, exporter: str = "langfuse", **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": exporter, **labels}) or 0.0


def scored_cases() -> list[ScoredCase]:
    trace = EvalCase(trace_id=TRACE, span_id=ROOT, scope="trace", service_name="geo", model="gpt-4o-mini",
                     metadata={"revision": 2})
    call = EvalCase(trace_id=TRACE, span_id=CALL, scope="llm_call", service_name="geo", model="gpt-4o-mini")
    conversation = EvalCase(trace_id=TRACE, span_id=ROOT, scope="conversation", service_name="geo",
                            metadata={"conversation_id": "conv-42", "turn_count": 3})
    perf = Dimension.PERFORMANCE
    return [
        ScoredCase(trace, (Score("error_free", 1.0, 1.0, "no errors", dimension=perf),
                           Score("latency", 0.25, 0.5, "1200 ms > 1000 ms", dimension=perf,
                                 metadata={"judge": {"provider": "openai", "model": "gpt-4o"}})),
                   skipped=(("contains", "not_applicable"),), errors=(("geval", "TimeoutError"),)),
        ScoredCase(call, (Score("error_free", 0.0, 1.0, "the call failed", dimension=perf),
                          Score("json_valid", 1.0, 1.0, "valid JSON (object)"))),
        ScoredCase(conversation, (Score("turn_count", 1.0, 1.0, "3 turns", dimension=Dimension.TRAJECTORY),)),
    ]


async def run_exporter(exporter: LangfuseExporter, batches: list[list[ScoredCase]]) -> None:
    await exporter.start()
    for batch in batches:
        await exporter.export(batch)
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)


async def test_bodies_validate_with_the_sdk_models_and_link_scores_to_traces_spans_and_sessions(
        server: FakeLangfuse) -> None:
    tm = Telemetry()
    exporter = LangfuseExporter(config(server), tm)
    exporter.set_metric_info(INFOS)
    await run_exporter(exporter, [scored_cases()])

    assert len(server.requests) == 1  # one batched request
    request = server.requests[0]
    expected = "Basic " + base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
    assert request.authorization == expected
    assert isinstance(request.body, list)
    models = sdk_validate(request.body)
    assert len(models) == 5  # skipped and errored evaluations are not scores
    by_key = {(m.name, m.trace_id or m.session_id, m.observation_id): m for m in models}

    trace_level = by_key[("error_free", TRACE, None)]  # trace-level case: no observation id
    assert trace_level.data_type == "BOOLEAN" and trace_level.value == 1.0
    assert trace_level.comment == "no errors" and trace_level.environment == "staging"
    assert trace_level.metadata == {"dimension": "performance", "threshold": 1.0, "passed": True,
                                    "evald_metric_version": "1", "scope": "trace", "service_name": "geo",
                                    "model": "gpt-4o-mini", "revision": 2}
    assert trace_level.timestamp is not None and trace_level.timestamp.tzinfo is not None

    latency = by_key[("latency", TRACE, None)]
    assert latency.data_type == "NUMERIC" and latency.value == 0.25
    assert latency.metadata is not None and latency.metadata["judge_model"] == "gpt-4o"
    assert latency.metadata["passed"] is False

    call = by_key[("error_free", TRACE, CALL)]  # the evaluated span is the observation
    assert call.data_type == "BOOLEAN" and call.value == 0.0
    assert re.fullmatch(r"[0-9a-f]{32}", call.trace_id or "") and re.fullmatch(r"[0-9a-f]{16}", CALL)
    assert by_key[("json_valid", TRACE, CALL)].data_type == "BOOLEAN"

    session = by_key[("turn_count", "conv-42", None)]  # conversation: a session score, never both ids
    assert session.trace_id is None and session.session_id == "conv-42"
    assert session.metadata is not None and session.metadata["trace_id"] == TRACE

    for model in models:
        assert uuid.UUID(model.id or "").version == 5
    assert trace_level.id == str(uuid.uuid5(SCORE_NAMESPACE, f"{TRACE}:trace:error_free:1"))
    assert call.id == str(uuid.uuid5(SCORE_NAMESPACE, f"{TRACE}:{CALL}:error_free:1"))
    assert sample(tm, "evald_exporter_sent_scores_total") == 5


async def test_without_metric_facts_every_score_is_numeric(server: FakeLangfuse) -> None:
    exporter = LangfuseExporter(config(server), Telemetry())
    await run_exporter(exporter, [scored_cases()])
    assert {m.data_type for m in sdk_validate(server.requests[0].body)} == {"NUMERIC"}


async def test_batch_size_one_sends_single_objects(server: FakeLangfuse) -> None:
    exporter = LangfuseExporter(config(server, batch_size=1), Telemetry())
    exporter.set_metric_info(INFOS)
    await run_exporter(exporter, [scored_cases()])
    assert len(server.requests) == 5
    for request in server.requests:
        assert isinstance(request.body, dict) and request.status == 200
        sdk_validate(request.body)


async def test_batches_follow_batch_size(server: FakeLangfuse) -> None:
    exporter = LangfuseExporter(config(server, batch_size=2, sending_queue={"num_consumers": 1}), Telemetry())
    await exporter.start()
    exporter.queue.submit([])  # nothing to do
    await exporter.export(scored_cases())
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert sorted(len(r.scores) for r in server.requests) == [1, 2, 2]


async def test_wrong_keys_are_refused_and_not_retried(server: FakeLangfuse) -> None:
    tm = Telemetry()
    exporter = LangfuseExporter(config(server, secret_key="sk-lf-wrong"), tm, component_id="langfuse/bad")
    await run_exporter(exporter, [scored_cases()])
    assert [r.status for r in server.requests] == [401]
    assert sample(tm, "evald_exporter_dropped_scores_total", "langfuse/bad", reason="permanent_error") == 5


async def test_a_207_counts_the_rejected_scores_and_is_not_retried(server: FakeLangfuse) -> None:
    server.plan(Planned(207, body={"accepted": 3, "rejected": 2, "errors": [{"message": "bad value"}] * 2}))
    tm = Telemetry()
    exporter = LangfuseExporter(config(server), tm)
    await run_exporter(exporter, [scored_cases()])
    assert len(server.requests) == 1
    assert sample(tm, "evald_exporter_sent_scores_total") == 3
    assert sample(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 2


async def test_a_400_is_permanent(server: FakeLangfuse) -> None:
    server.plan(Planned(400, body={"message": "Invalid request data"}))
    tm = Telemetry()
    await run_exporter(LangfuseExporter(config(server), tm), [scored_cases()])
    assert len(server.requests) == 1
    assert sample(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 5


async def test_a_score_larger_than_the_body_limit_is_dropped_alone(server: FakeLangfuse) -> None:
    tm = Telemetry()
    huge = ScoredCase(EvalCase(trace_id=TRACE, span_id=ROOT), (Score("latency", 1.0, 0.5, "x" * 1_100_000),))
    await run_exporter(LangfuseExporter(config(server), tm), [[huge, *scored_cases()]])
    assert sample(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 1
    assert len(server.accepted) == 5


async def test_the_rate_limit_spaces_requests(server: FakeLangfuse) -> None:
    exporter = LangfuseExporter(config(server, rate_limit_per_minute=300, batch_size=1), Telemetry())
    await run_exporter(exporter, [scored_cases()[:2]])  # 4 scores, one per request, 0.2 s apart
    times = [r.at for r in server.requests]
    assert len(times) == 4
    assert all(b - a >= 0.18 for a, b in zip(times, times[1:], strict=False))


CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
REPLAY_CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: error_free, scope: all }
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
  - { kind: token_usage, scope: all, options: { max_tokens: 100000 } }
"""


async def test_replaying_the_same_traces_twice_gives_the_same_score_ids(server: FakeLangfuse) -> None:
    files = sorted((CORPUS / "otel-openai-v2.span_only").glob("*.pb"))[:6]
    assert files
    resolved = parse_config(REPLAY_CONFIG, "test", environ={})
    infos = metric_infos(build_bindings(resolved.metrics))
    runs: list[list[dict[str, Any]]] = []
    for _ in range(2):
        result = await replay(files, resolved)
        assert result.scored
        before = len(server.requests)
        exporter = LangfuseExporter(config(server), Telemetry())
        exporter.set_metric_info(infos)
        await run_exporter(exporter, [result.scored])
        bodies = [s for r in server.requests[before:] for s in r.scores]
        for r in server.requests[before:]:
            sdk_validate(r.body)
        runs.append(sorted(bodies, key=lambda s: s["id"]))
    first, second = runs
    assert len(first) == len(second) > 0
    assert len({s["id"] for s in first}) == len(first)  # unique within a run
    assert [s["id"] for s in first] == [s["id"] for s in second]  # and the same across runs: Langfuse upserts
    # identical bodies, timestamp included (the evaluated span's end time): a re-delivery upserts, never duplicates
    assert first == second
    assert all(s["timestamp"].startswith(("20", "19")) for s in first)


def test_config_rejects_bad_values_and_keeps_secrets_out_of_reprs() -> None:
    base = {"public_key": "pk-lf-1", "secret_key": "sk-lf-secret-value"}
    cfg = LangfuseExporterConfig.model_validate({**base, "host": "https://cloud.langfuse.com/"})
    assert cfg.host == "https://cloud.langfuse.com"
    assert "sk-lf-secret-value" not in repr(cfg) and "sk-lf-secret-value" not in json.dumps(
        cfg.model_dump(mode="json"))
    for bad in ({"environment": "Prod"}, {"environment": "langfuse-x"}, {"host": "ftp://x"}, {"timeout": 0},
                {"rate_limit_per_minute": -1}, {"batch_size": 0}):
        with pytest.raises(ValidationError):
            LangfuseExporterConfig.model_validate({**base, **bad})
    with pytest.raises(ValidationError):
        LangfuseExporterConfig.model_validate({})


def test_keys_come_from_the_environment_and_a_missing_one_is_reported_with_its_path() -> None:
    text = """
exporters:
  langfuse/prod:
    public_key: "${env:LANGFUSE_PUBLIC_KEY}"
    secret_key: "${env:LANGFUSE_SECRET_KEY}"
"""
    resolved = parse_config(text, "t", environ={"LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "sk"})
    cfg = resolved.exporters["langfuse/prod"]
    assert isinstance(cfg, LangfuseExporterConfig) and cfg.secret_key.get_secret_value() == "sk"
    with pytest.raises(ConfigError) as err:
        parse_config(text, "t", environ={"LANGFUSE_PUBLIC_KEY": "pk"})
    assert ("exporters.langfuse/prod.secret_key", "environment variable LANGFUSE_SECRET_KEY is not set") in (
        err.value.problems)
