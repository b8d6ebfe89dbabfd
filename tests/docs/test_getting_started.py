"""docs/getting-started.md: its OTel SDK snippet (docs/examples/send_trace.py) really gets a score out of evald.

The example runs unchanged against an in-process evald (OTLP/HTTP in, Prometheus out on 127.0.0.1), and the scores
appear on /metrics as the guide says. The guide's commands and files are checked to exist.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import time
from pathlib import Path
from types import ModuleType

import httpx
from prometheus_client.parser import text_string_to_metric_families

from evald.config.loader import parse_config
from evald.service import EvaldService
from tests.integration.daemon import free_port

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "getting-started.md"
EXAMPLE = ROOT / "docs" / "examples" / "send_trace.py"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("send_trace", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scores(text: str) -> dict[tuple[str, str, str], float]:
    """(metric, service_name, outcome) -> evald_evaluations_total."""
    out: dict[tuple[str, str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "evald_evaluations_total":
                key = (s.labels["metric"], s.labels["service_name"], s.labels["outcome"])
                out[key] = out.get(key, 0.0) + s.value
    return out


async def test_the_example_trace_is_scored_on_metrics() -> None:
    grpc_port, http_port, metrics_port = free_port(), free_port(), free_port()
    config = parse_config(f"""
receivers:
  otlp:
    grpc: {{ endpoint: "127.0.0.1:{grpc_port}" }}
    http: {{ endpoint: "127.0.0.1:{http_port}" }}
assembly: {{ settle: 200ms }}
metrics:
  - {{ kind: error_free, scope: all }}
  - {{ kind: token_usage, scope: llm_call, options: {{ max_tokens: 8000 }} }}
  - {{ kind: contains, name: mentions_paris, scope: trace, options: {{ values: [Paris] }} }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{metrics_port}" }}
""")
    service = EvaldService(config)
    await service.start()
    try:
        trace_id = await asyncio.to_thread(example().send_trace, f"http://127.0.0.1:{http_port}")
        assert re.fullmatch(r"[0-9a-f]{32}", trace_id)
        wanted = {("error_free", "geo-agent", "pass"), ("token_usage", "geo-agent", "pass"),
                  ("mentions_paris", "geo-agent", "pass")}
        got: dict[tuple[str, str, str], float] = {}
        deadline = time.monotonic() + 30
        async with httpx.AsyncClient(timeout=5) as client:
            while time.monotonic() < deadline:
                got = scores((await client.get(f"http://127.0.0.1:{metrics_port}/metrics")).text)
                if wanted <= {k for k, v in got.items() if v > 0}:
                    break
                await asyncio.sleep(0.1)
        assert wanted <= {k for k, v in got.items() if v > 0}, got
        assert not [k for k, v in got.items() if k[2] in ("fail", "error") and v > 0], got
    finally:
        await service.shutdown()


def test_the_guide_uses_the_example_and_real_files() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert "python docs/examples/send_trace.py" in text
    assert "evald run --config config/minimal.yaml" in text
    assert "docker compose -f deploy/docker-compose.yaml up --build" in text
    assert "-f deploy/collector/values-otlp.yaml" in text and "helm install evald helm/evald" in text
    for path in re.findall(r"\]\(((?:\.\./)?[\w./-]+\.(?:md|py|yaml|json))(?:#[\w-]+)?\)", text):
        assert (GUIDE.parent / path).resolve().exists(), f"docs/getting-started.md links a missing file: {path}"
    for path in re.findall(r"(?<![\w/.])((?:deploy|config|docs|helm)/[\w./-]+\.(?:yaml|py|json))", text):
        assert (ROOT / path).exists(), f"docs/getting-started.md names a missing file: {path}"
