"""PrometheusExporter: outcome counting, histogram buckets, the rolling pass rate (fake clock), overflow, exemplars,
deprecated names and no `_created` series."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from evald.case import Dimension, EvalCase, Score
from evald.exporters.prometheus import PrometheusExporter, PrometheusExporterConfig
from evald.model import ScoredCase
from evald.telemetry import Telemetry
from tests.integration.daemon import Daemon

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(clock: FakeClock | None = None, **cfg: object) -> tuple[PrometheusExporter, Telemetry]:
    telemetry = Telemetry()
    config = PrometheusExporterConfig.model_validate(cfg)
    return PrometheusExporter(config, telemetry, clock=clock or FakeClock()), telemetry


def scored(
    *scores: Score,
    service: str | None = "svc",
    model: str | None = "gpt-4o-mini",
    scope: str = "trace",
    skipped: tuple[tuple[str, str], ...] = (),
    errors: tuple[tuple[str, str], ...] = (),
    dims: dict[str, str] | None = None,
) -> ScoredCase:
    case = EvalCase(
        input="What is the capital of France?", output="Paris", trace_id=TRACE_ID, span_id=SPAN_ID,
        scope=scope, service_name=service, model=model,  # type: ignore[arg-type]
    )
    return ScoredCase(case=case, scores=scores, skipped=skipped, errors=errors, metric_dimensions=dims or {})


def score(name: str, value: float, threshold: float = 0.5, dim: Dimension = Dimension.CORRECTNESS) -> Score:
    return Score(name=name, value=value, threshold=threshold, reason="free text reason", dimension=dim)


def sample(telemetry: Telemetry, name: str, **labels: str) -> float | None:
    base = {"dimension": "correctness", "scope": "trace", "service_name": "svc", "model": "gpt-4o-mini"}
    return telemetry.registry.get_sample_value(name, {**base, **labels})


async def test_outcomes_are_counted_including_skipped_and_errors() -> None:
    exporter, telemetry = make()
    dims = {"contains": "correctness", "json_valid": "correctness", "toxicity": "safety"}
    await exporter.export([
        scored(score("contains", 1.0), skipped=(("json_valid", "not_applicable"),), dims=dims),
        scored(score("contains", 0.0), errors=(("toxicity", "timeout"),), dims=dims),
        scored(score("contains", 0.7)),
    ])
    assert sample(telemetry, "evald_evaluations_total", metric="contains", outcome="pass") == 2
    assert sample(telemetry, "evald_evaluations_total", metric="contains", outcome="fail") == 1
    assert sample(telemetry, "evald_evaluations_total", metric="contains", outcome="skipped") == 0
    assert sample(telemetry, "evald_evaluations_total", metric="json_valid", outcome="skipped") == 1
    assert sample(telemetry, "evald_evaluations_total", metric="toxicity", outcome="error", dimension="safety") == 1
    # skipped and error are not scores: no histogram observation, no pass-rate sample
    assert sample(telemetry, "evald_score_count", metric="json_valid") is None
    assert sample(telemetry, "evald_pass_rate_ratio", metric="toxicity", dimension="safety") is None
    assert sample(telemetry, "evald_score_count", metric="contains") == 3


async def test_histogram_buckets_are_cumulative_with_inclusive_upper_bounds() -> None:
    exporter, telemetry = make()
    await exporter.export([scored(score("m", v)) for v in (0.0, 0.1, 0.15, 0.5, 1.0)])
    le = {"0.1": 2, "0.2": 3, "0.5": 4, "0.9": 4, "1.0": 5, "+Inf": 5}
    for bound, count in le.items():
        assert sample(telemetry, "evald_score_bucket", metric="m", le=bound) == count, bound
    assert sample(telemetry, "evald_score_sum", metric="m") == pytest.approx(1.75)
    assert sample(telemetry, "evald_score_count", metric="m") == 5


async def test_custom_buckets_and_const_labels() -> None:
    exporter, telemetry = make(score_buckets=[0.5, 0.9], const_labels={"env": "prod"})
    await exporter.export([scored(score("m", 0.95))])
    assert sample(telemetry, "evald_score_bucket", metric="m", le="0.9", env="prod") == 0
    assert sample(telemetry, "evald_score_bucket", metric="m", le="+Inf", env="prod") == 1
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass", env="prod") == 1
    assert telemetry.registry.get_sample_value("evald_pass_rate_window_seconds", {"env": "prod"}) == 300


async def test_pass_rate_over_rolling_window_expires_and_drops_the_series() -> None:
    clock = FakeClock(1000.0)
    exporter, telemetry = make(clock, pass_rate_window="60s")
    await exporter.export([scored(score("m", 1.0)), scored(score("m", 0.0))])
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 0.5
    clock.now += 30
    await exporter.export([scored(score("m", 1.0)), scored(score("m", 1.0))])
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 0.75
    clock.now += 40  # the first two fell out of the 60 s window
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 1.0
    clock.now += 60  # nothing left in the window: the series is gone, not stale
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") is None
    text = generate_latest(telemetry.registry).decode()
    assert "evald_pass_rate_ratio{" not in text and "evald_pass_rate{" not in text
    # counters and the histogram are cumulative and stay
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass") == 3
    clock.now += 3600
    await exporter.export([scored(score("m", 0.0))])
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 0.0


async def test_pass_rate_memory_is_bounded_by_time_buckets() -> None:
    clock = FakeClock(0.0)
    exporter, _ = make(clock, pass_rate_window="5m")
    for _ in range(10_000):
        clock.now += 0.5
        await exporter.export([scored(score("m", 1.0))])
    (window,) = exporter._table.windows.values()
    assert len(window.buckets) <= exporter._table.window_buckets == 30


async def test_pass_rate_is_per_label_set() -> None:
    exporter, telemetry = make()
    await exporter.export([
        scored(score("m", 1.0), service="a"), scored(score("m", 0.0), service="b"),
        scored(score("m", 0.0), service="a", scope="llm_call"),
    ])
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m", service_name="a") == 1.0
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m", service_name="b") == 0.0
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m", service_name="a", scope="llm_call") == 0.0


async def test_label_sets_beyond_max_series_fold_into_overflow() -> None:
    exporter, telemetry = make(max_series=2)
    await exporter.export([scored(score("m", 1.0), service=f"svc-{i}") for i in range(5)])
    await exporter.export([scored(score("m", 0.0), service="svc-0")])  # admitted before: not folded
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass", service_name="svc-1") == 1
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass", service_name="svc-2") is None
    overflow = {"service_name": "__overflow__", "model": "__overflow__"}
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass", **overflow) == 3
    assert sample(telemetry, "evald_score_count", metric="m", **overflow) == 3
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m", **overflow) == 1.0
    assert telemetry.registry.get_sample_value(
        "evald_exporter_series_overflow_total", {"exporter": "prometheus"}) == 3
    services = {
        s.labels["service_name"] for f in text_string_to_metric_families(generate_latest(telemetry.registry).decode())
        if f.name.startswith("evald_score") for s in f.samples
    }
    assert services == {"svc-0", "svc-1", "__overflow__"}


async def test_overflow_counter_is_exported_as_zero_before_any_overflow() -> None:
    _, telemetry = make()
    assert telemetry.registry.get_sample_value(
        "evald_exporter_series_overflow_total", {"exporter": "prometheus"}) == 0


async def test_missing_service_name_and_model_are_empty_label_values() -> None:
    exporter, telemetry = make()
    await exporter.export([scored(score("m", 1.0), service=None, model=None)])
    assert sample(telemetry, "evald_evaluations_total", metric="m", outcome="pass", service_name="", model="") == 1


async def test_label_values_never_contain_trace_ids_or_text() -> None:
    exporter, telemetry = make()
    await exporter.export([scored(score("m", 1.0), errors=(("x", "boom: " + TRACE_ID),), skipped=(("y", "why"),))])
    text = generate_latest(telemetry.registry).decode()
    assert TRACE_ID not in text and SPAN_ID not in text
    assert "trace_id" not in text and "span_id" not in text
    assert "free text reason" not in text and "boom" not in text and "capital" not in text
    for family in text_string_to_metric_families(text):
        if family.name.startswith(("evald_score", "evald_evaluations", "evald_pass_rate_ratio")):
            for s in family.samples:
                assert set(s.labels) <= {"metric", "dimension", "scope", "service_name", "model", "outcome", "le"}


async def test_long_label_values_are_truncated() -> None:
    exporter, telemetry = make()
    await exporter.export([scored(score("m", 1.0), service="s" * 1000)])
    assert sample(telemetry, "evald_score_count", metric="m", service_name="s" * 128) == 1


async def test_lifecycle_and_single_instance_per_registry() -> None:
    exporter, telemetry = make()
    await exporter.shutdown(1.0)
    await exporter.start()
    await exporter.export([])
    await exporter.shutdown(1.0)
    await exporter.shutdown(1.0)
    with pytest.raises(ValueError, match="only one prometheus exporter"):
        PrometheusExporter(PrometheusExporterConfig(), telemetry, component_id="prometheus/2")


def test_config_defaults_and_validation() -> None:
    cfg = PrometheusExporterConfig()
    assert cfg.endpoint == "0.0.0.0:9464"
    assert cfg.pass_rate_window == 300.0
    assert cfg.max_series == 10000
    assert cfg.score_buckets == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert PrometheusExporterConfig.model_validate({"pass_rate_window": "2m"}).pass_rate_window == 120.0
    for bad in (
        {"pass_rate_window": "0s"}, {"max_series": 0}, {"score_buckets": []}, {"score_buckets": [0.5, 0.2]},
        {"score_buckets": [0.5, float("inf")]}, {"const_labels": {"outcome": "x"}},
        {"const_labels": {"bad-name": "x"}}, {"const_labels": {"__x": "y"}}, {"endpoint": "nope"}, {"unknown": 1},
    ):
        with pytest.raises(ValidationError):
            PrometheusExporterConfig.model_validate(bad)


async def test_openmetrics_buckets_carry_trace_exemplars_and_labels_stay_clean() -> None:
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics

    exporter, telemetry = make()
    await exporter.export([scored(score("m", 0.35)), scored(score("m", 0.95))])
    text = generate_openmetrics(telemetry.registry).decode()
    family = next(f for f in parse_openmetrics(text) if f.name == "evald_score")
    buckets = {s.labels["le"]: s for s in family.samples if s.name == "evald_score_bucket"}
    for le, value in (("0.4", 0.35), ("1.0", 0.95)):
        exemplar = buckets[le].exemplar
        assert exemplar is not None and exemplar.labels == {"trace_id": TRACE_ID, "span_id": SPAN_ID}
        assert exemplar.value == value
    assert buckets["0.1"].exemplar is None  # an empty bucket has none
    assert all("trace_id" not in s.labels for s in family.samples)  # ids only ever in exemplars


async def test_online_baseline_flags_a_regression_against_the_long_window() -> None:
    clock = FakeClock()
    exporter, telemetry = make(clock, pass_rate_window="5m", baseline_window="1h", regression_margin=0.2,
                               regression_min_evaluations=10)
    for _ in range(40):  # an hour ago: 40 passes
        await exporter.export([scored(score("m", 1.0))])
    assert sample(telemetry, "evald_pass_rate_baseline_ratio", metric="m") == 1.0
    assert sample(telemetry, "evald_pass_rate_regression", metric="m") == 0
    clock.now += 30 * 60  # half an hour later the short window is empty; the hour still holds the passes
    for i in range(10):  # now: 3 passes, 7 fails -> short 0.3, baseline 43/50 = 0.86 -> 0.3 < 0.86 - 0.2
        await exporter.export([scored(score("m", 1.0 if i < 3 else 0.0))])
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 0.3
    assert sample(telemetry, "evald_pass_rate_baseline_ratio", metric="m") == 43 / 50
    assert sample(telemetry, "evald_pass_rate_regression", metric="m") == 1
    clock.now += 2 * 3600  # both windows empty: no stale series
    assert sample(telemetry, "evald_pass_rate_baseline_ratio", metric="m") is None
    assert sample(telemetry, "evald_pass_rate_regression", metric="m") is None
    await exporter.export([scored(score("m", 0.0))])  # a new evaluation brings the label set back
    assert sample(telemetry, "evald_pass_rate_baseline_ratio", metric="m") == 0.0
    assert sample(telemetry, "evald_pass_rate_ratio", metric="m") == 0.0


async def test_too_few_evaluations_never_flag_a_regression() -> None:
    exporter, telemetry = make(regression_min_evaluations=20)
    for value in (1.0, 0.0, 0.0):
        await exporter.export([scored(score("m", value))])
    assert sample(telemetry, "evald_pass_rate_regression", metric="m") == 0


async def test_evaluations_counter_carries_an_exemplar_per_outcome_in_openmetrics_only() -> None:
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics

    exporter, telemetry = make()
    dims = {"toxicity": "safety"}
    other_span = "1111111111111111"
    await exporter.export([scored(score("m", 0.9)), scored(score("m", 0.1), errors=(("toxicity", "timeout"),),
                                                          dims=dims)])
    case = dataclasses.replace(scored(score("m", 0.8)).case, span_id=other_span)
    await exporter.export([ScoredCase(case=case, scores=(score("m", 0.8),))])
    family = next(f for f in parse_openmetrics(generate_openmetrics(telemetry.registry).decode())
                  if f.name == "evald_evaluations")
    by = {(s.labels["metric"], s.labels["outcome"]): s for s in family.samples if s.name == "evald_evaluations_total"}
    assert by[("m", "pass")].value == 2 and by[("m", "fail")].value == 1
    latest_pass, fail = by[("m", "pass")].exemplar, by[("m", "fail")].exemplar
    error = by[("toxicity", "error")].exemplar
    assert latest_pass is not None and latest_pass.labels == {"trace_id": TRACE_ID, "span_id": other_span}
    assert fail is not None and fail.labels == {"trace_id": TRACE_ID, "span_id": SPAN_ID} and fail.value == 1.0
    assert error is not None and error.labels["trace_id"] == TRACE_ID and fail.timestamp is not None
    assert by[("m", "skipped")].exemplar is None  # an outcome never seen has none
    assert "trace_id" not in generate_latest(telemetry.registry).decode()  # the text format carries no exemplars


async def test_renamed_gauges_keep_their_old_names_as_deprecated_copies() -> None:
    exporter, telemetry = make()
    await exporter.export([scored(score("m", 1.0)), scored(score("m", 0.0))])
    for old, new in (("evald_pass_rate", "evald_pass_rate_ratio"),
                     ("evald_pass_rate_baseline", "evald_pass_rate_baseline_ratio")):
        assert sample(telemetry, new, metric="m") == 0.5
        assert sample(telemetry, old, metric="m") == sample(telemetry, new, metric="m")
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(telemetry.registry).decode())}
    assert families["evald_pass_rate"].documentation.startswith("DEPRECATED, removed in the next release: use "
                                                                "evald_pass_rate_ratio.")
    assert not families["evald_pass_rate_ratio"].documentation.startswith("DEPRECATED")


def test_a_full_evald_scrape_has_no_created_series(tmp_path: Path) -> None:
    """A live `evald run` (every self-metric registered, a score exported) exposes no `*_created` sample."""
    with Daemon(tmp_path, "metrics: [{kind: error_free, scope: all}]") as daemon:
        provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
        provider.add_span_processor(SimpleSpanProcessor(
            OTLPSpanExporter(endpoint=f"http://127.0.0.1:{daemon.http_port}/v1/traces", timeout=5)))
        with provider.get_tracer("t").start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                 "gen_ai.request.model": "gpt-4o-mini"})
        provider.shutdown()
        deadline, text = time.monotonic() + 15, ""
        while time.monotonic() < deadline and 'outcome="pass"' not in text:
            time.sleep(0.2)
            text = daemon.scrape()
        openmetrics = httpx.get(f"{daemon.metrics_url}/metrics", timeout=2,
                                headers={"Accept": "application/openmetrics-text; version=1.0.0"}).text
    families = list(text_string_to_metric_families(text))
    passes = [s for f in families for s in f.samples
              if s.name == "evald_evaluations_total" and s.labels["outcome"] == "pass" and s.value > 0]
    assert passes, text[-2000:]
    assert len(families) > 50  # the whole registry, not just the score families
    assert [s.name for f in families for s in f.samples if s.name.endswith("_created")] == []
    assert "_created" not in openmetrics and "# EOF" in openmetrics
