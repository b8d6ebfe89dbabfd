"""A real Prometheus server (Debian's `prometheus`) scrapes `evald run` and answers PromQL over the score series."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

from tests.integration.daemon import Daemon, free_port
from tests.integration.test_daemon_e2e import CONFIG, send_chat_trace, value, wait_for

pytestmark = pytest.mark.integration  # needs Debian's `prometheus` binary on PATH (.ci/run installs it)


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Yields (base URL, scrape config path); the config is written by the test before the first scrape."""
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text("global: { scrape_interval: 1s }\nscrape_configs: []\n")
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "prometheus.log").read_text(errors="replace")[-2000:])
            time.sleep(0.2)
        yield url, config
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def query(url: str, promql: str) -> list[dict[str, object]]:
    body = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=5).json()
    assert body["status"] == "success", body
    result: list[dict[str, object]] = body["data"]["result"]
    return result


def test_prometheus_scrapes_evald_and_promql_returns_the_pass_rate(
    tmp_path: Path, prometheus: tuple[str, Path]
) -> None:
    url, config = prometheus
    with Daemon(tmp_path, CONFIG) as daemon:
        config.write_text(f"""global: {{ scrape_interval: 1s, scrape_timeout: 1s }}
scrape_configs:
  - job_name: evald
    static_configs: [{{ targets: ["127.0.0.1:{daemon.metrics_port}"] }}]
""")
        assert httpx.post(f"{url}/-/reload", timeout=5).status_code == 200
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{daemon.http_port}/v1/traces")
        send_chat_trace(exporter, "geo-http", "The capital of France is Paris.")
        wait_for(daemon, lambda t: value(t, "evald_scored_cases_total", scope="trace") >= 1)
        deadline = time.monotonic() + 30
        rates: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            rates = query(url, 'evald_pass_rate_ratio{metric="contains", service_name="geo-http"}')
            if rates:
                break
            time.sleep(0.5)
        assert rates, "Prometheus never stored evald_pass_rate_ratio"
        (series,) = rates
        assert series["metric"]["job"] == "evald" and series["metric"]["scope"] == "trace"  # type: ignore[index]
        assert float(series["value"][1]) == 1.0  # type: ignore[index]
        # the counter the docs recommend aggregating from, and evald's own health, are there too
        passes = query(url, 'sum by (metric) (evald_evaluations_total{outcome="pass"})')
        assert {r["metric"]["metric"] for r in passes} >= {"contains", "error_free"}  # type: ignore[index]
        assert query(url, 'up{job="evald"} == 1')
        assert daemon.stop() == 0
