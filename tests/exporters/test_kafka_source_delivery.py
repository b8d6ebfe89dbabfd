"""At-least-once from a Kafka source through the langfuse exporter (issue 16 items 1 and 2), with tansu and the
Langfuse stand-in.

1. Langfuse is down: `evald run` scores every record but commits nothing (the scores are only queued), is killed
   with SIGKILL, and a new consumer with Langfuse up delivers every score and then commits.
2. A backlog of 220 records through a langfuse queue of 10: a full queue pushes back instead of dropping; every
   trace's scores arrive, nothing is counted as dropped, and the offsets are committed to the end.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.exporters.corpus_traces import renumbered
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, sdk_validate
from tests.integration.daemon import start_evald
from tests.receivers.kafka.broker import free_port
from tests.receivers.kafka.conftest import kafka_broker  # noqa: F401  (the tansu fixture)
from tests.receivers.kafka.support import (
    committed,
    create_topic,
    produce,
    wait_committed,
)

pytestmark = pytest.mark.integration


def records(n: int) -> tuple[list[tuple[str | None, bytes]], set[str]]:
    """``n`` records keyed by their fresh trace ids, and those ids."""
    out: list[tuple[str | None, bytes]] = list(renumbered(n))
    return out, {key for key, _ in out if key}


def config(path: Path, bootstrap: str, topic: str, group: str, admin: int, langfuse: str, queue: str) -> Path:
    path.write_text(f"""
receivers:
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topic: {topic} }}
    group_id: {group}
    initial_offset: earliest
    session_timeout: 1500ms
    heartbeat_interval: 200ms
    commit_interval: 100ms
exporters:
  langfuse:
    host: "{langfuse}"
    public_key: {PUBLIC_KEY}
    secret_key: {SECRET_KEY}
    rate_limit_per_minute: 0
    batch_size: 5
    timeout: 1s
    retry_on_failure: {{ initial_interval: 100ms, max_interval: 300ms, max_elapsed_time: 0 }}
    sending_queue: {queue}
assembly: {{ settle: 100ms, decision_wait: 2s }}
metrics:
  - kind: error_free
    scope: all
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
telemetry: {{ endpoint: "127.0.0.1:{admin}" }}
""")
    return path


def metric_sum(admin: int, prefix: str) -> float:
    text = httpx.get(f"http://127.0.0.1:{admin}/metrics", timeout=2).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def start(path: Path, admin: int) -> subprocess.Popen[bytes]:
    return start_evald(path, path.with_suffix(".log"), f"http://127.0.0.1:{admin}/readyz")


async def test_nothing_is_committed_before_langfuse_has_the_scores_and_a_crash_loses_nothing(
        kafka_broker: str, tmp_path: Path) -> None:  # noqa: F811
    topic, group = f"lf_down_{os.getpid()}", f"evald_lf_down_{os.getpid()}"
    await create_topic(kafka_broker, topic, 2)
    produced, want = records(14)
    ends = await produce(kafka_broker, topic, produced)
    langfuse = await FakeLangfuse().start()
    await langfuse.stop()  # down while the first consumer runs
    admin_a = free_port()
    path_a = config(tmp_path / "a.yaml", kafka_broker, topic, group, admin_a, langfuse.url, "{ queue_size: 1000 }")
    first = await asyncio.to_thread(start, path_a, admin_a)
    try:
        deadline = time.monotonic() + 20
        while await asyncio.to_thread(metric_sum, admin_a, "evald_scored_cases_total{") < 2 * len(want):
            assert time.monotonic() < deadline, path_a.with_suffix(".log").read_text()
            await asyncio.sleep(0.1)  # at least a trace case and a chat case per trace
        await asyncio.sleep(1.0)  # ten commit intervals
        scored_a = await asyncio.to_thread(metric_sum, admin_a, "evald_scored_cases_total{")
        assert await asyncio.to_thread(metric_sum, admin_a, 'evald_exporter_sent_scores_total{exporter="langfuse"') == 0
        # every record is scored, but its scores are only queued: nothing may be committed
        assert set((await committed(kafka_broker, group, topic, 2)).values()) == {None}
    finally:
        first.kill()
        first.wait(5)

    await langfuse.start()
    admin_b = free_port()
    path_b = config(tmp_path / "b.yaml", kafka_broker, topic, group, admin_b, langfuse.url, "{ queue_size: 1000 }")
    second = await asyncio.to_thread(start, path_b, admin_b)
    try:
        got = await wait_committed(kafka_broker, group, topic, 2, ends, timeout=30)
        assert got == {p: ends.get(p) for p in range(2)}, path_b.with_suffix(".log").read_text()
        scored_b = await asyncio.to_thread(metric_sum, admin_b, "evald_scored_cases_total{")
    finally:
        second.terminate()
        assert await asyncio.to_thread(second.wait, 15) == 0
        await langfuse.stop()
    stored = {str(b["id"]): b for b in langfuse.accepted}
    assert {str(b["traceId"]) for b in stored.values()} == want  # the commit came after every trace's scores
    # one error_free score per case; the first process scored the same cases and delivered none of them
    assert len(stored) == len(langfuse.accepted) == scored_b == scored_a
    for request in langfuse.requests:
        sdk_validate(request.body)


async def test_a_backlog_through_a_small_queue_pushes_back_instead_of_dropping(
        kafka_broker: str, tmp_path: Path) -> None:  # noqa: F811
    topic, group = f"lf_backlog_{os.getpid()}", f"evald_lf_backlog_{os.getpid()}"
    await create_topic(kafka_broker, topic, 2)
    produced, want = records(220)
    ends = await produce(kafka_broker, topic, produced)
    langfuse = await FakeLangfuse().start()
    admin = free_port()
    path = config(tmp_path / "c.yaml", kafka_broker, topic, group, admin, langfuse.url,
                  "{ queue_size: 10, num_consumers: 1 }")
    proc = await asyncio.to_thread(start, path, admin)
    try:
        got = await wait_committed(kafka_broker, group, topic, 2, ends, timeout=60)
        assert got == {p: ends.get(p) for p in range(2)}, path.with_suffix(".log").read_text()
        await asyncio.sleep(0.3)
        dropped = await asyncio.to_thread(metric_sum, admin, 'evald_exporter_dropped_scores_total{exporter="langfuse"')
        sent = await asyncio.to_thread(metric_sum, admin, 'evald_exporter_sent_scores_total{exporter="langfuse"')
        scored = await asyncio.to_thread(metric_sum, admin, "evald_scored_cases_total{")
    finally:
        proc.terminate()
        assert await asyncio.to_thread(proc.wait, 15) == 0
        await langfuse.stop()
    assert dropped == 0
    stored = {str(b["id"]): b for b in langfuse.accepted}
    assert {str(b["traceId"]) for b in stored.values()} == want
    assert len(stored) == sent == scored  # one error_free score per case, every one delivered
