"""A full exporter queue pushes back to OTLP clients (issue 16 item 2): ``evald run`` with Langfuse down and small
queues answers 503 with ``Retry-After`` once the sending queue, the case queue and the assembly window are full,
instead of dropping scores; when Langfuse is back, the client's retries are accepted and every accepted trace's
scores arrive. Nothing is counted as dropped.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from tests.exporters.corpus_traces import renumbered
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse
from tests.integration.daemon import Daemon

pytestmark = pytest.mark.integration


def config(server: FakeLangfuse) -> str:
    return f"""  langfuse:
    host: "{server.url}"
    public_key: "{PUBLIC_KEY}"
    secret_key: "{SECRET_KEY}"
    rate_limit_per_minute: 0
    batch_size: 1
    timeout: 1s
    retry_on_failure: {{ initial_interval: 100ms, max_interval: 200ms, max_elapsed_time: 0 }}
    sending_queue: {{ queue_size: 2, num_consumers: 1 }}
assembly: {{ settle: 50ms, decision_wait: 1s, num_traces: 3 }}
metrics:
  - kind: error_free
    scope: trace
pipeline: {{ workers: 1, queue_size: 1 }}
"""


def post(port: int, body: bytes) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/v1/traces", content=body,
                      headers={"Content-Type": "application/x-protobuf"}, timeout=5)


def metric(daemon: Daemon, prefix: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in daemon.scrape().splitlines() if line.startswith(prefix))


async def test_a_full_sending_queue_makes_the_otlp_receiver_refuse_with_a_retry_hint(tmp_path: Path) -> None:
    server = await FakeLangfuse().start()
    await server.stop()
    daemon = Daemon(tmp_path, config(server))
    traces = renumbered(30)
    accepted: list[str] = []
    refused: list[tuple[str, bytes]] = []
    try:
        await asyncio.to_thread(daemon.start)
        for trace_id, body in traces:
            response = await asyncio.to_thread(post, daemon.http_port, body)
            if response.status_code == 200:
                accepted.append(trace_id)
            else:
                assert response.status_code == 503, response.text
                assert int(response.headers["Retry-After"]) >= 1
                refused.append((trace_id, body))
            await asyncio.sleep(0.1)  # let the window release what settled
        assert refused, "the receiver never pushed back"
        dropped = await asyncio.to_thread(metric, daemon, 'evald_exporter_dropped_scores_total{exporter="langfuse"')
        assert dropped == 0  # pushed back, not dropped
        assert not server.accepted

        await server.start()
        deadline = time.monotonic() + 30
        while refused:  # the client retries what was refused, as an OTLP exporter does
            assert time.monotonic() < deadline, daemon.log()
            trace_id, body = refused[0]
            if (await asyncio.to_thread(post, daemon.http_port, body)).status_code == 200:
                accepted.append(trace_id)
                refused.pop(0)
            else:
                await asyncio.sleep(0.2)
        while {str(s["traceId"]) for s in server.accepted} != set(accepted):
            assert time.monotonic() < deadline, daemon.log()
            await asyncio.sleep(0.1)
        dropped = await asyncio.to_thread(metric, daemon, 'evald_exporter_dropped_scores_total{exporter="langfuse"')
        rc = await asyncio.to_thread(daemon.stop)
    finally:
        await asyncio.to_thread(daemon.stop)
        await server.stop()
    assert rc == 0
    assert dropped == 0
    assert sorted(accepted) == sorted(t for t, _ in traces)
    assert len({str(s["id"]) for s in server.accepted}) == len(traces)  # one trace-level score per trace
