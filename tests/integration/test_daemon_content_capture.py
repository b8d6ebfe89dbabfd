"""End to end, as a new user tries it: the real openai SDK with opentelemetry-instrumentation-openai-v2 in its
defaults (content capture off) sends to `evald run` with the embedded default configuration (only the ports moved to
free ones). The default metrics score what the spans carry; the diagnosis series and WARN name the switch."""

from __future__ import annotations

import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import httpx

from tests.integration.daemon import free_port, start_evald, stop_evald
from tests.integration.test_daemon_e2e import value

ROOT = Path(__file__).resolve().parents[2]


def _embedded_config(tmp: Path) -> tuple[Path, int, int, int]:
    text = resources.files("evald").joinpath("config/default.yaml").read_text()
    grpc, http, metrics = free_port(), free_port(), free_port()
    for old, new in (("0.0.0.0:4317", f"127.0.0.1:{grpc}"), ("0.0.0.0:4318", f"127.0.0.1:{http}"),
                     ("0.0.0.0:9464", f"127.0.0.1:{metrics}"), ("settle: 2s", "settle: 500ms")):
        assert old in text
        text = text.replace(old, new)
    path = tmp / "default.yaml"
    path.write_text(text)
    return path, grpc, http, metrics


def test_openai_v2_defaults_are_scored_and_the_switch_is_named(tmp_path: Path) -> None:
    config, _, http_port, metrics_port = _embedded_config(tmp_path)
    log = tmp_path / "evald.log"
    proc = start_evald(config, log, f"http://127.0.0.1:{metrics_port}/readyz")
    try:
        app = subprocess.run([sys.executable, "-m", "tests.integration.openai_v2_app",
                              f"http://127.0.0.1:{http_port}", "shop-assistant"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert app.returncode == 0, app.stderr
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline:
            text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2).text
            if value(text, "evald_scored_cases_total") >= 4:
                break
            time.sleep(0.2)
        # two calls, each an llm_call case and a trace case, every one scored by the three default metrics
        assert value(text, "evald_cases_not_evaluable_total") == 0
        for metric in ("error_free", "latency", "token_usage"):
            assert value(text, "evald_evaluations_total", metric=metric, service_name="shop-assistant") >= 3, metric
        assert value(text, "evald_evaluations_total", metric="error_free", outcome="fail") == 2  # the 500
        assert value(text, "evald_evaluations_total", metric="token_usage", outcome="pass") == 2
        assert value(text, "evald_content_capture_cases_total", service_name="shop-assistant",
                     instrumentation="otel-genai", content="none") == 4
    finally:
        assert stop_evald(proc) == 0
    output = log.read_text()
    warnings = [line for line in output.splitlines() if "records no message content" in line]
    assert len(warnings) == 1, output
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in warnings[0]
    assert "shop-assistant" in warnings[0] and "Traceback" not in output
