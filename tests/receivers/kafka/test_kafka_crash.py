"""At-least-once across a crash: ``evald run`` consumes, is killed (SIGKILL) before it commits, and a new consumer
in the same group re-reads and scores every record."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.receivers.kafka.broker import free_port
from tests.receivers.kafka.support import (
    committed,
    corpus_records,
    create_topic,
    produce,
    scored_trace_ids,
    wait_committed,
)

pytestmark = pytest.mark.integration


def write_config(path: Path, bootstrap: str, topic: str, group: str, out: Path, admin: int, commit: str) -> Path:
    path.write_text(f"""
receivers:
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topic: {topic} }}
    group_id: {group}
    initial_offset: earliest
    session_timeout: 1500ms
    heartbeat_interval: 200ms
    commit_interval: {commit}
exporters:
  file: {{ path: "{out}", flush_interval: 100ms }}
assembly: {{ settle: 200ms, decision_wait: 2s }}
metrics:
  - kind: error_free
    scope: all
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
telemetry: {{ endpoint: "127.0.0.1:{admin}" }}
""")
    return path


def start(config: Path, log: Path, admin: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "evald", "run", "--config", str(config)],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"http://127.0.0.1:{admin}/readyz", timeout=0.5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"evald did not become ready: {log.read_text()}")


def scored(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def wait_scored(path: Path, want: set[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while {str(r["trace_id"]) for r in scored(path)} < want:
        assert time.monotonic() < deadline, f"scored only {sorted({r['trace_id'] for r in scored(path)})}"
        await asyncio.sleep(0.1)


async def test_killed_consumer_loses_nothing(kafka_broker: str, tmp_path: Path) -> None:
    topic, group = f"otlp_spans_crash_{os.getpid()}", f"evald_crash_{os.getpid()}"
    await create_topic(kafka_broker, topic, 2)
    ends = await produce(kafka_broker, topic, list(corpus_records()))
    want = scored_trace_ids()

    admin_a, out_a = free_port(), tmp_path / "a.jsonl"
    config_a = write_config(tmp_path / "a.yaml", kafka_broker, topic, group, out_a, admin_a, commit="1h")
    first = start(config_a, tmp_path / "a.log", admin_a)
    try:
        await wait_scored(out_a, want)  # scored and exported, but its commit is an hour away...
        assert set((await committed(kafka_broker, group, topic, 2)).values()) == {None}
    finally:
        first.kill()  # ... so it dies with nothing committed
        first.wait(5)

    admin_b, out_b = free_port(), tmp_path / "b.jsonl"
    config_b = write_config(tmp_path / "b.yaml", kafka_broker, topic, group, out_b, admin_b, commit="100ms")
    second = start(config_b, tmp_path / "b.log", admin_b)
    try:
        got = await wait_committed(kafka_broker, group, topic, 2, ends, timeout=30)
        assert got == {p: ends.get(p) for p in range(2)}, (tmp_path / "b.log").read_text()
        await wait_scored(out_b, want)  # every uncommitted record was read again and scored again
    finally:
        second.terminate()
        assert second.wait(15) == 0
    lines = scored(out_b)
    identities = [(r["trace_id"], r["span_id"], r["scope"]) for r in lines]
    assert len(identities) == len(set(identities)), "the second consumer scored each case once"
