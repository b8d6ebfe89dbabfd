"""End to end: `evald run` (a subprocess) sends scores to a local Langfuse stand-in; SIGTERM flushes the queue.

The OpenTelemetry SDK sends GenAI traces over OTLP/HTTP; evald's langfuse exporter is rate limited so that scores
are still queued when SIGTERM arrives; every one must reach the server before the process exits, within
``pipeline.shutdown_timeout``. Blocking calls (subprocess, SDK export) run in threads so the fake server, on this
test's event loop, keeps answering.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, sdk_validate
from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import send_chat_trace

pytestmark = pytest.mark.integration

SHUTDOWN_TIMEOUT = 10.0


def config(server: FakeLangfuse, rate_limit: int = 120, batch_size: int = 2) -> str:
    # The first line continues the daemon template's `exporters:` mapping (it ends with the prometheus entry).
    return f"""  langfuse/e2e:
    host: "{server.url}"
    public_key: "${{env:LANGFUSE_PUBLIC_KEY}}"
    secret_key: "${{env:LANGFUSE_SECRET_KEY}}"
    environment: e2e
    rate_limit_per_minute: {rate_limit}
    batch_size: {batch_size}
assembly: {{ settle: 200ms, decision_wait: 5s }}
metrics:
  - kind: error_free
    scope: all
  - kind: contains
    scope: trace
    options: {{ values: ["Paris"] }}
pipeline: {{ workers: 2, shutdown_timeout: {SHUTDOWN_TIMEOUT:g}s }}
"""


async def test_sigterm_flushes_queued_scores_to_langfuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    server = await FakeLangfuse().start()
    daemon = Daemon(tmp_path, config(server))
    try:
        await asyncio.to_thread(daemon.start)
        url = f"http://127.0.0.1:{daemon.http_port}/v1/traces"
        trace_ids = []
        for i in range(4):  # 3 scores per trace: error_free (trace + call), contains (trace)
            trace_ids.append(await asyncio.to_thread(
                send_chat_trace, OTLPSpanExporter(endpoint=url), "geo", "Paris." if i % 2 else "Lyon."))
        end = time.monotonic() + 15
        while not server.accepted:
            assert time.monotonic() < end, f"no score reached Langfuse:\n{daemon.log()}"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.6)  # let every trace through assembly (settle) and scoring
        queued_at_sigterm = 12 - len(server.accepted)
        t0 = time.monotonic()
        rc = await asyncio.to_thread(daemon.stop, SHUTDOWN_TIMEOUT + 5)
        took = time.monotonic() - t0
    finally:
        await asyncio.to_thread(daemon.stop)
        await server.stop()

    assert rc == 0, daemon.log()
    assert queued_at_sigterm >= 4, "scores should still have been queued when SIGTERM arrived"
    assert took < SHUTDOWN_TIMEOUT
    ids = server.accepted_ids()
    assert len(ids) == 12 and not server.duplicates(), daemon.log()
    assert {s["traceId"] for s in server.accepted} == set(trace_ids)
    assert {s["environment"] for s in server.accepted} == {"e2e"}
    for request in server.requests:
        sdk_validate(request.body)
    assert {r.status for r in server.requests} == {202}


async def test_a_server_taking_one_score_per_request_gets_every_score_from_evald_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default batch_size (100) against a server that answers arrays 400: the daemon switches to objects."""
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    server = await FakeLangfuse(objects_only=True).start()
    daemon = Daemon(tmp_path, config(server, rate_limit=0, batch_size=100))
    try:
        await asyncio.to_thread(daemon.start)
        url = f"http://127.0.0.1:{daemon.http_port}/v1/traces"
        trace_ids = [await asyncio.to_thread(send_chat_trace, OTLPSpanExporter(endpoint=url), "geo", "Paris.")
                     for _ in range(4)]
        end = time.monotonic() + 15
        while len(server.accepted) < 12:
            assert time.monotonic() < end, f"not every score reached Langfuse:\n{daemon.log()}"
            await asyncio.sleep(0.05)
        metrics = await asyncio.to_thread(daemon.scrape)
        rc = await asyncio.to_thread(daemon.stop, SHUTDOWN_TIMEOUT + 5)
    finally:
        await asyncio.to_thread(daemon.stop)
        await server.stop()

    assert rc == 0, daemon.log()
    assert not server.duplicates() and {s["traceId"] for s in server.accepted} == set(trace_ids)
    refused = [r for r in server.requests if r.status == 400]
    assert refused and all(isinstance(r.body, list) for r in refused)  # the batches sent before the switch
    objects = [r for r in server.requests if r not in refused]
    assert len(objects) == 12  # then exactly one request per score
    for request in objects:
        assert isinstance(request.body, dict) and request.status == 200
        sdk_validate(request.body)
    assert 'evald_exporter_langfuse_mode_switches_total{exporter="langfuse/e2e",mode="object"} 1.0' in metrics
    assert 'evald_exporter_dropped_scores_total{exporter="langfuse/e2e",reason="permanent_error"} 0.0' in metrics
    assert daemon.log().count("takes one score per request") == 1
