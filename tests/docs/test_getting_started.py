"""docs/getting-started.md: its OTel SDK snippet (docs/examples/send_trace.py) really gets a score out of evald.

The example runs unchanged against an in-process evald running the guide's config/minimal.yaml (on free ports of
127.0.0.1), and /metrics shows the guide's sample evald_evaluations_total lines. The guide's commands and files
are checked to exist.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import time
from pathlib import Path
from types import ModuleType

import httpx
import yaml
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


def scores(text: str) -> dict[frozenset[tuple[str, str]], float]:
    """The labels of each evald_evaluations_total sample -> its value."""
    return {
        frozenset(s.labels.items()): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "evald_evaluations_total"
    }


def guide_config(grpc_port: int, http_port: int, metrics_port: int) -> str:
    """The guide's config/minimal.yaml on free ports, a short settle, and two metrics that need the messages."""
    doc = yaml.safe_load((ROOT / "config" / "minimal.yaml").read_text(encoding="utf-8"))
    doc["receivers"]["otlp"] = {"grpc": {"endpoint": f"127.0.0.1:{grpc_port}"},
                                "http": {"endpoint": f"127.0.0.1:{http_port}"}}
    doc["exporters"]["prometheus"] = {"endpoint": f"127.0.0.1:{metrics_port}"}
    doc["assembly"] = {"settle": "200ms"}
    doc["metrics"] += [
        {"kind": "token_usage", "scope": "llm_call", "options": {"max_tokens": 8000}},
        {"kind": "contains", "name": "mentions_paris", "scope": "trace", "options": {"values": ["Paris"]}},
    ]
    return yaml.safe_dump(doc)


def guide_sample_output() -> list[frozenset[tuple[str, str]]]:
    """The labels of the evald_evaluations_total lines the guide shows /metrics printing."""
    (block,) = re.findall(r"```text\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.DOTALL)
    lines = [line for line in block.splitlines() if line.startswith("evald_evaluations_total{")]
    assert lines, "the guide shows no evald_evaluations_total line"
    return [next(iter(scores(f"{line}\n"))) for line in lines]


async def test_the_example_trace_is_scored_on_metrics() -> None:
    grpc_port, http_port, metrics_port = free_port(), free_port(), free_port()
    service = EvaldService(parse_config(guide_config(grpc_port, http_port, metrics_port)))
    await service.start()
    try:
        trace_id = await asyncio.to_thread(example().send_trace, f"http://127.0.0.1:{http_port}")
        assert re.fullmatch(r"[0-9a-f]{32}", trace_id)
        shown = guide_sample_output()  # what the guide says config/minimal.yaml gives for the example
        wanted = {*shown, *(frozenset({("metric", m), ("service_name", "geo-agent"), ("outcome", "pass")})
                            for m in ("token_usage", "mentions_paris"))}

        def missing(got: dict[frozenset[tuple[str, str]], float]) -> list[frozenset[tuple[str, str]]]:
            return [w for w in wanted if not any(w <= labels and v > 0 for labels, v in got.items())]

        got: dict[frozenset[tuple[str, str]], float] = {}
        deadline = time.monotonic() + 30
        async with httpx.AsyncClient(timeout=5) as client:
            while time.monotonic() < deadline:
                got = scores((await client.get(f"http://127.0.0.1:{metrics_port}/metrics")).text)
                if not missing(got):
                    break
                await asyncio.sleep(0.1)
        assert not missing(got), (missing(got), got)
        assert not [k for k, v in got.items() if dict(k)["outcome"] in ("fail", "error") and v > 0], got
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


def test_the_guide_shows_what_evald_version_prints_for_a_compiled_install() -> None:
    """The guide's sample ``evald version`` line counts today's compiled modules (it went stale twice when one was
    added): the CLI's own text for a full compiled build."""
    from evald import __version__
    from evald.native import COMPILED_MODULES

    n = len(COMPILED_MODULES)
    assert f"# evald {__version__} ({n}/{n} hot modules compiled with mypyc)" in GUIDE.read_text(encoding="utf-8")
