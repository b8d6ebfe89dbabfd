"""At-least-once across a crash: ``evald run`` consumes, is killed (SIGKILL) before it commits, and a new consumer
in the same group re-reads and scores every record; the fake Langfuse, a sink of both, then holds exactly one score
per (trace, span, metric) identity (scores are upserted on their deterministic ids)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse
from tests.integration.daemon import start_evald
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


def write_config(path: Path, bootstrap: str, topic: str, group: str, out: Path, admin: int, commit: str,
                 langfuse: str) -> Path:
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
  langfuse: {{ host: "{langfuse}", public_key: {PUBLIC_KEY}, secret_key: {SECRET_KEY}, rate_limit_per_minute: 0 }}
assembly: {{ settle: 200ms, decision_wait: 2s }}
metrics:
  - kind: error_free
    scope: all
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
telemetry: {{ endpoint: "127.0.0.1:{admin}" }}
""")
    return path


def start(config: Path, log: Path, admin: int) -> subprocess.Popen[bytes]:
    return start_evald(config, log, f"http://127.0.0.1:{admin}/readyz")


def scored(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def wait_scored(path: Path, want: set[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while {str(r["trace_id"]) for r in scored(path)} < want:
        assert time.monotonic() < deadline, f"scored only {sorted({r['trace_id'] for r in scored(path)})}"
        await asyncio.sleep(0.1)


def stored(langfuse: FakeLangfuse) -> dict[str, dict[str, object]]:
    """What Langfuse stores: the accepted scores upserted by id (a later body with the same id replaces it)."""
    return {str(body["id"]): body for body in langfuse.accepted}


async def test_killed_consumer_loses_nothing(kafka_broker: str, tmp_path: Path) -> None:
    langfuse = await FakeLangfuse().start()
    try:
        await crash_and_restart(kafka_broker, tmp_path, langfuse)
    finally:
        await langfuse.stop()
    want = scored_trace_ids()
    scores = stored(langfuse)
    assert {str(b["traceId"]) for b in scores.values()} == want
    identities = {(b["traceId"], b.get("observationId"), b["name"]) for b in scores.values()}
    assert len(identities) == len(scores), "exactly one stored score per (trace, span, metric) identity"
    ids_by_identity: dict[tuple[object, ...], set[str]] = {}
    for body in langfuse.accepted:
        ids_by_identity.setdefault((body["traceId"], body.get("observationId"), body["name"]), set()).add(
            str(body["id"]))
    assert all(len(ids) == 1 for ids in ids_by_identity.values()), "a re-scored case reuses its score id"
    assert len(langfuse.accepted) >= 2 * len(scores), "both consumers sent every score: the repeats were upserted"


async def wait_stored(langfuse: FakeLangfuse, want: set[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while {str(b["traceId"]) for b in stored(langfuse).values()} < want:
        assert time.monotonic() < deadline, "the Langfuse sink did not receive every trace's scores"
        await asyncio.sleep(0.1)


async def wait_until_sent(langfuse: FakeLangfuse, count: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while len(langfuse.accepted) < count:
        assert time.monotonic() < deadline, f"{len(langfuse.accepted)} of {count} scores sent"
        await asyncio.sleep(0.1)


async def crash_and_restart(kafka_broker: str, tmp_path: Path, langfuse: FakeLangfuse) -> None:
    topic, group = f"otlp_spans_crash_{os.getpid()}", f"evald_crash_{os.getpid()}"
    await create_topic(kafka_broker, topic, 2)
    ends = await produce(kafka_broker, topic, list(corpus_records()))
    want = scored_trace_ids()

    admin_a, out_a = free_port(), tmp_path / "a.jsonl"
    config_a = write_config(tmp_path / "a.yaml", kafka_broker, topic, group, out_a, admin_a, "1h", langfuse.url)
    first = await asyncio.to_thread(start, config_a, tmp_path / "a.log", admin_a)
    try:
        await wait_scored(out_a, want)  # scored and exported, but its commit is an hour away...
        await wait_stored(langfuse, want)  # (Langfuse got them too, so the second consumer's scores are repeats)
        assert set((await committed(kafka_broker, group, topic, 2)).values()) == {None}
    finally:
        first.kill()  # ... so it dies with nothing committed
        first.wait(5)
    first_sent = len(langfuse.accepted)

    admin_b, out_b = free_port(), tmp_path / "b.jsonl"
    config_b = write_config(tmp_path / "b.yaml", kafka_broker, topic, group, out_b, admin_b, "100ms", langfuse.url)
    second = await asyncio.to_thread(start, config_b, tmp_path / "b.log", admin_b)
    try:
        got = await wait_committed(kafka_broker, group, topic, 2, ends, timeout=30)
        assert got == {p: ends.get(p) for p in range(2)}, (tmp_path / "b.log").read_text()
        await wait_scored(out_b, want)  # every uncommitted record was read again and scored again
        await wait_until_sent(langfuse, 2 * first_sent)
    finally:
        second.terminate()
        assert await asyncio.to_thread(second.wait, 15) == 0
    lines = scored(out_b)
    identities = [(r["trace_id"], r["span_id"], r["scope"]) for r in lines]
    assert len(identities) == len(set(identities)), "the second consumer scored each case once"
