"""kill -9 of an OTLP daemon loses nothing it acknowledged (receivers.otlp.wal, evald/receivers/wal.py).

``evald run`` with the receiver write-ahead log and a langfuse exporter whose stand-in is down (an in-memory sending
queue: the scores can only wait) gets N traces from the real OTel SDK exporter over OTLP/HTTP, each answered 200;
it is killed with SIGKILL once it scored them. A second ``evald run`` on the same directory, with the stand-in up,
replays the log and delivers exactly the N traces' scores; after it stops the log is empty. A SIGTERM whose exporter
flush gives scores up (counted ``shutdown``) leaves their requests in the log for the next start, and one after
everything was delivered leaves nothing. The same kill -9 fault for the Kafka source:
tests/exporters/test_kafka_source_delivery.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import time
from pathlib import Path

from evald.receivers.wal import wal_file
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, sdk_validate
from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import send_chat_trace

TRACES = 12
SCORES_PER_TRACE = 3  # error_free on the trace and on the chat call, contains on the trace


def config(server: FakeLangfuse, wal_dir: Path) -> str:
    # the Daemon's receivers block is extended with the log (a second `receivers:` key is not allowed)
    return f"""  langfuse/scores:
    host: "{server.url}"
    public_key: "{PUBLIC_KEY}"
    secret_key: "{SECRET_KEY}"
    rate_limit_per_minute: 0
    batch_size: 5
    timeout: 1s
    retry_on_failure: {{ initial_interval: 100ms, max_interval: 300ms, max_elapsed_time: 0 }}
    sending_queue: {{ num_consumers: 2 }}
assembly: {{ settle: 100ms, decision_wait: 5s }}
metrics:
  - kind: error_free
    scope: all
  - kind: contains
    scope: trace
    options: {{ values: ["Paris"] }}
pipeline: {{ workers: 2, shutdown_timeout: 3s }}
"""


def daemon(tmp: Path, server: FakeLangfuse, wal_dir: Path) -> Daemon:
    d = Daemon(tmp, config(server, wal_dir))
    text = d.config_path.read_text()
    d.config_path.write_text(text.replace("exporters:\n", f'    wal: {{ directory: "{wal_dir}" }}\nexporters:\n', 1))
    return d


def rows(wal_dir: Path) -> int:
    with contextlib.closing(sqlite3.connect(wal_file(str(wal_dir), "otlp"))) as db:
        return int(db.execute("SELECT count(*) FROM wal").fetchone()[0])


def counter(daemon: Daemon, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in daemon.scrape().splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


async def test_sigkill_after_answering_200_then_restart_delivers_every_trace_exactly(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    server = await FakeLangfuse().start()
    await server.stop()  # down: the scores can only wait in the exporter's (memory) queue
    wal_dir = tmp_path / "wal"
    (tmp_path / "first").mkdir()
    first = daemon(tmp_path / "first", server, wal_dir)
    results: list[SpanExportResult] = []
    try:
        await asyncio.to_thread(first.start)
        url = f"http://127.0.0.1:{first.http_port}/v1/traces"

        class Recording(OTLPSpanExporter):  # the real exporter; records what evald answered
            def export(self, spans: object) -> SpanExportResult:
                result = super().export(spans)  # type: ignore[arg-type]
                results.append(result)
                return result

        trace_ids = [await asyncio.to_thread(send_chat_trace, Recording(endpoint=url), "geo",
                                             "Paris." if i % 2 else "Lyon.") for i in range(TRACES)]
        assert results and all(r is SpanExportResult.SUCCESS for r in results)  # every request answered 200
        end = time.monotonic() + 15
        while await asyncio.to_thread(counter, first, "evald_scored_cases_total") < 2 * TRACES:
            assert time.monotonic() < end, first.log()
            await asyncio.sleep(0.05)
        assert await asyncio.to_thread(counter, first, "evald_receiver_wal_requests") == len(results)
        assert first.proc is not None
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(5)
    finally:
        await asyncio.to_thread(first.stop)
    assert rows(wal_dir) == len(results)  # every acknowledged request is in the log: nothing was delivered

    await server.start()
    (tmp_path / "second").mkdir()
    second = daemon(tmp_path / "second", server, wal_dir)
    try:
        await asyncio.to_thread(second.start)
        end = time.monotonic() + 20
        while len(set(server.accepted_ids())) < SCORES_PER_TRACE * TRACES:
            assert time.monotonic() < end, second.log()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # anything more would arrive now
        replayed = await asyncio.to_thread(counter, second, "evald_receiver_wal_replayed_requests_total")
        end = time.monotonic() + 5
        while await asyncio.to_thread(counter, second, "evald_receiver_wal_requests") > 0:
            assert time.monotonic() < end, second.log()
            await asyncio.sleep(0.05)
        rc = await asyncio.to_thread(second.stop)
    finally:
        await asyncio.to_thread(second.stop)
        await server.stop()
    assert rc == 0, second.log()
    assert replayed == len(results)
    accepted = server.accepted
    assert len(set(server.accepted_ids())) == len(accepted) == SCORES_PER_TRACE * TRACES  # exactly, no duplicate
    assert {s["traceId"] for s in accepted} == set(trace_ids)
    assert sum(1 for s in accepted if s["name"] == "contains" and s["value"] == 1) == TRACES // 2
    assert rows(wal_dir) == 0  # delivered, so deleted
    assert "replayed" in second.log()
    assert "open-file limit (RLIMIT_NOFILE)" in second.log()  # evald run raised (or logged) its descriptor limit
    for request in server.requests:
        sdk_validate(request.body)


async def test_what_a_sigterm_drops_stays_in_the_log_and_what_was_delivered_does_not(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    server = await FakeLangfuse().start()
    await server.stop()
    wal_dir = tmp_path / "wal"
    traces = 4
    (tmp_path / "first").mkdir()
    first = daemon(tmp_path / "first", server, wal_dir)
    try:  # Langfuse down: at SIGTERM the exporter's flush gives the scores up (counted shutdown)
        await asyncio.to_thread(first.start)
        url = f"http://127.0.0.1:{first.http_port}/v1/traces"
        trace_ids = [await asyncio.to_thread(send_chat_trace, OTLPSpanExporter(endpoint=url), "geo", "Paris.")
                     for _ in range(traces)]
        end = time.monotonic() + 15
        while await asyncio.to_thread(counter, first, "evald_scored_cases_total") < 2 * traces:
            assert time.monotonic() < end, first.log()
            await asyncio.sleep(0.05)
        assert await asyncio.to_thread(first.stop) == 0
    finally:
        await asyncio.to_thread(first.stop)
    assert f"exporter drops (scores): langfuse/scores/shutdown {SCORES_PER_TRACE * traces}" in first.log()
    assert rows(wal_dir) == 2 * traces  # dropped at shutdown, so kept: one row per request

    await server.start()
    (tmp_path / "second").mkdir()
    second = daemon(tmp_path / "second", server, wal_dir)
    try:  # Langfuse up: the replayed traces are delivered during the run, so a SIGTERM leaves nothing
        await asyncio.to_thread(second.start)
        end = time.monotonic() + 20
        while len(set(server.accepted_ids())) < SCORES_PER_TRACE * traces:
            assert time.monotonic() < end, second.log()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        assert await asyncio.to_thread(second.stop) == 0
    finally:
        await asyncio.to_thread(second.stop)
        await server.stop()
    assert {s["traceId"] for s in server.accepted} == set(trace_ids)
    assert len(server.accepted) == SCORES_PER_TRACE * traces
    assert rows(wal_dir) == 0
