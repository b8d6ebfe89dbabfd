"""AdminHttpServer on 127.0.0.1:0: /metrics (text, OpenMetrics, promtool-clean), /healthz, /readyz, lifecycle."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator

import httpx
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from evald.case import Dimension, EvalCase, Score
from evald.exporters.admin_http import AdminHttpServer
from evald.exporters.prometheus import PrometheusExporter, PrometheusExporterConfig
from evald.model import ScoredCase
from evald.telemetry import Telemetry

pytestmark = pytest.mark.integration


@pytest.fixture
async def telemetry() -> Telemetry:
    telemetry = Telemetry()
    telemetry.build_info.labels("0.0.0-test").set(1)
    telemetry.accepted_spans.labels("otlp", "grpc").inc(2)
    exporter = PrometheusExporter(PrometheusExporterConfig(), telemetry)
    case = EvalCase(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", service_name="geo", model="gpt-4o-mini")
    await exporter.export([
        ScoredCase(case, (Score("contains", 1.0, 0.5), Score("latency", 0.2, 0.5, dimension=Dimension.PERFORMANCE)),
                   skipped=(("json_valid", "not_applicable"),), metric_dimensions={"json_valid": "correctness"}),
    ])
    return telemetry


@pytest.fixture
async def server(telemetry: Telemetry) -> AsyncIterator[AdminHttpServer]:
    server = AdminHttpServer("0.0.0.0:0", telemetry, host_override="127.0.0.1")
    await server.start()
    yield server
    await server.shutdown(2.0)


@pytest.fixture
async def client(server: AdminHttpServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
        yield client


async def test_binds_a_free_port(server: AdminHttpServer) -> None:
    assert server.host == "127.0.0.1"
    assert server.bound_port and server.bound_port > 0


async def test_metrics_serves_self_metrics_and_scores(client: httpx.AsyncClient) -> None:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    expected = {"evald_receiver_accepted_spans", "evald_evaluations", "evald_score", "evald_pass_rate_ratio"}
    assert expected <= set(families)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    labels = (("dimension", "correctness"), ("metric", "contains"), ("model", "gpt-4o-mini"), ("scope", "trace"),
              ("service_name", "geo"))
    assert samples[("evald_score_count", labels)] == 1
    assert samples[("evald_pass_rate_ratio", labels)] == 1.0
    assert samples[("evald_evaluations_total", tuple(sorted((*labels, ("outcome", "pass")))))] == 1
    assert "4bf92f3577b34da6a3ce929d0e0e4736" not in response.text


async def test_metrics_honours_openmetrics_accept_header(client: httpx.AsyncClient) -> None:
    accept = "application/openmetrics-text;version=1.0.0;q=0.6,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    response = await client.get("/metrics", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    assert response.text.endswith("# EOF\n")
    names = {f.name for f in parse_openmetrics(response.text)}
    assert {"evald_evaluations", "evald_score", "evald_pass_rate_ratio", "evald_exporter_series_overflow"} <= names


async def test_metrics_gzip_when_accepted(client: httpx.AsyncClient) -> None:
    response = await client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert response.headers.get("content-encoding") == "gzip"
    assert "evald_score_bucket" in response.text


async def test_metrics_pass_promtool_check(client: httpx.AsyncClient) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed: `apt-get install -y prometheus` (Debian) provides it; CI installs it")
    text = (await client.get("/metrics")).text
    result = await asyncio.to_thread(
        subprocess.run, [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (result.stdout + result.stderr).strip(), result.stdout + result.stderr


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert (response.status_code, response.text) == (200, "ok")


async def test_readyz_follows_health_state(client: httpx.AsyncClient, telemetry: Telemetry) -> None:
    health = telemetry.health
    health.components.update({"exporter:prometheus": True, "receiver:otlp/grpc": False})
    response = await client.get("/readyz")
    assert response.status_code == 503
    body = json.loads(response.text)
    assert body == {"ready": False, "started": False, "stopping": False, "not_ready": ["receiver:otlp/grpc"]}
    health.components["receiver:otlp/grpc"] = True
    health.started = True
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert json.loads(response.text)["ready"] is True
    health.stopping = True
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert json.loads(response.text)["stopping"] is True


async def test_unknown_path_is_404_and_wrong_method_405(client: httpx.AsyncClient) -> None:
    assert (await client.get("/nope")).status_code == 404
    assert (await client.post("/metrics")).status_code == 405


async def test_port_in_use_fails_fast(server: AdminHttpServer, telemetry: Telemetry) -> None:
    other = AdminHttpServer(f"127.0.0.1:{server.bound_port}", telemetry)
    with pytest.raises(OSError):
        await other.start()
    await other.shutdown(1.0)


async def test_shutdown_is_idempotent_and_safe_without_start(telemetry: Telemetry) -> None:
    never_started = AdminHttpServer("127.0.0.1:0", telemetry)
    await never_started.shutdown(1.0)
    await never_started.shutdown(1.0)
    server = AdminHttpServer("127.0.0.1:0", telemetry)
    await server.start()
    port = server.bound_port
    await server.shutdown(1.0)
    await server.shutdown(1.0)
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient(timeout=2) as client:
            await client.get(f"http://127.0.0.1:{port}/healthz")


async def test_metrics_name_filter_renders_only_the_asked_series(client: httpx.AsyncClient) -> None:
    """``?name[]=`` as in the official client's handler: a cheap probe of a few counters (the benchmarks poll it)."""
    response = await client.get("/metrics", params=[("name[]", "evald_evaluations_total"),
                                                    ("name[]", "evald_receiver_accepted_spans_total")])
    assert response.status_code == 200
    samples = [s for f in text_string_to_metric_families(response.text) for s in f.samples]
    assert {s.name for s in samples} == {"evald_evaluations_total", "evald_receiver_accepted_spans_total"}
    assert [s.value for s in samples if s.name == "evald_receiver_accepted_spans_total"] == [2]
    passed = [s for s in samples if s.labels.get("metric") == "contains" and s.labels.get("outcome") == "pass"]
    assert [s.value for s in passed] == [1]
    everything = await client.get("/metrics")
    assert len(response.text) < len(everything.text) / 5
