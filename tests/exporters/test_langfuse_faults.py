"""Langfuse exporter under faults: 429 + Retry-After, 500s, the server down for a while, a full queue.

Everything the queue had room for arrives exactly once; what it had no room for (or gave up on) is counted with a
reason; the server sees every score id at most once among its accepted requests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from evald.case import EvalCase, Score
from evald.exporters.acks import export_ack
from evald.exporters.langfuse import LangfuseExporter, LangfuseExporterConfig
from evald.exporters.sending import DROP_REASONS
from evald.exporters.sending_policy import format_http_date
from evald.model import Delivery, ScoredCase
from evald.telemetry import Telemetry
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, Planned, sdk_validate

pytestmark = pytest.mark.integration


@pytest.fixture
async def server() -> AsyncIterator[FakeLangfuse]:
    fake = await FakeLangfuse().start()
    yield fake
    await fake.stop()


def exporter_for(server: FakeLangfuse, tm: Telemetry, **overrides: Any) -> LangfuseExporter:
    raw: dict[str, Any] = {
        "host": server.url, "public_key": PUBLIC_KEY, "secret_key": SECRET_KEY, "rate_limit_per_minute": 0,
        "timeout": "1s", "batch_size": 5,
        "retry_on_failure": {"initial_interval": "50ms", "max_interval": "200ms", "max_elapsed_time": "30s"},
        "sending_queue": {"queue_size": 100, "num_consumers": 1},
    }
    return LangfuseExporter(LangfuseExporterConfig.model_validate({**raw, **overrides}), tm)


def cases(n: int, start: int = 0) -> list[ScoredCase]:
    """``n`` trace cases with one score each (so scores = cases)."""
    return [ScoredCase(EvalCase(trace_id=f"{i:032x}", span_id=f"{i:016x}", scope="trace"),
                       (Score("latency", 0.5, 0.5, f"case {i}"),)) for i in range(start, start + n)]


def count(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": "langfuse", **labels}) or 0.0


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_429_then_500s_then_the_server_down_loses_nothing_the_queue_held(server: FakeLangfuse) -> None:
    tm = Telemetry()
    server.plan(Planned(429, {"Retry-After": "1"}, {"message": "rate limit exceeded"}),
                Planned(500), Planned(502), Planned(503, {"Retry-After": "0"}))
    exporter = exporter_for(server, tm)
    await exporter.start()
    await exporter.export(cases(5))
    await wait_until(lambda: len(server.accepted) == 5)
    statuses = [r.status for r in server.requests]
    assert statuses == [429, 500, 502, 503, 202]
    assert server.requests[1].at - server.requests[0].at >= 1.0  # Retry-After: 1 was honoured

    await server.stop()  # down for a while: connection refused on every attempt
    await exporter.export(cases(20, start=5))
    await asyncio.sleep(1.0)
    assert exporter.queue.pending == 20
    await server.start()  # back on the same port
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)

    assert sorted(server.accepted_ids()) == sorted(set(server.accepted_ids()))
    assert len(server.accepted) == 25 and not server.duplicates()
    for r in server.requests:
        sdk_validate(r.body)
    assert count(tm, "evald_exporter_sent_scores_total") == 25
    for reason in ("queue_full", "retries_exhausted", "permanent_error", "shutdown"):
        assert count(tm, "evald_exporter_dropped_scores_total", reason=reason) == 0
    assert count(tm, "evald_exporter_retries_total", reason="throttled") == 1
    assert count(tm, "evald_exporter_retries_total", reason="server_error") == 3
    assert count(tm, "evald_exporter_retries_total", reason="network") >= 2


async def test_an_http_date_retry_after_is_honoured(server: FakeLangfuse) -> None:
    server.plan(Planned(429, {"Retry-After": format_http_date(time.time() + 2)}))
    exporter = exporter_for(server, Telemetry())
    await exporter.start()
    await exporter.export(cases(1))
    await wait_until(lambda: len(server.accepted) == 1)
    await exporter.shutdown(2)
    assert server.requests[1].at - server.requests[0].at >= 0.9  # a whole-second date: at least 1 s of the 2


async def test_beyond_the_queue_drops_are_counted_and_the_rest_arrives_once(server: FakeLangfuse) -> None:
    tm = Telemetry()
    await server.stop()
    exporter = exporter_for(server, tm, sending_queue={"queue_size": 10, "num_consumers": 1,
                                                       "block_on_overflow": False})
    await exporter.start()
    await exporter.export(cases(10))
    await asyncio.sleep(0.2)  # the consumer took a batch of 5 and is retrying it: 5 queued, room for 5
    await exporter.export(cases(15, start=10))
    assert count(tm, "evald_exporter_dropped_scores_total", reason="queue_full") == 10
    await server.start()
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert sorted(server.accepted_ids()) == sorted(set(server.accepted_ids()))
    assert len(server.accepted) == 15 and not server.duplicates()
    assert {s["comment"] for s in server.accepted} == {f"case {i}" for i in range(15)}
    assert count(tm, "evald_exporter_sent_scores_total") == 15


async def test_a_full_queue_makes_export_wait_and_nothing_is_dropped(server: FakeLangfuse) -> None:
    tm = Telemetry()
    await server.stop()
    exporter = exporter_for(server, tm, sending_queue={"queue_size": 10, "num_consumers": 1})
    assert exporter.waits_for_room
    await exporter.start()
    await exporter.export(cases(10))
    await asyncio.sleep(0.2)  # a batch of 5 in flight (retrying), 5 queued: room for 5 of the next 15
    blocked = asyncio.create_task(exporter.export(cases(15, start=10)))
    await asyncio.sleep(0.5)
    assert not blocked.done()  # the pipeline's worker waits here: backpressure instead of queue_full
    assert exporter.queue.pending == 15
    await server.start()
    await asyncio.wait_for(blocked, 10)
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert len(server.accepted) == 25 and not server.duplicates()
    assert {s["comment"] for s in server.accepted} == {f"case {i}" for i in range(25)}
    assert count(tm, "evald_exporter_sent_scores_total") == 25
    assert sum(count(tm, "evald_exporter_dropped_scores_total", reason=r) for r in DROP_REASONS) == 0


async def test_the_acknowledgement_waits_for_delivery_not_for_the_queue(server: FakeLangfuse) -> None:
    tm = Telemetry()
    await server.stop()
    exporter = exporter_for(server, tm)
    await exporter.start()
    acked: list[float] = []
    delivery = Delivery(lambda: acked.append(time.monotonic()))
    token = export_ack.set(delivery)
    try:
        await exporter.export(cases(12))
    finally:
        export_ack.reset(token)
    delivery.seal()  # what the pipeline does once export() returned
    await asyncio.sleep(0.5)
    assert not acked  # queued, not delivered: a Kafka source must not commit yet
    await server.start()
    await wait_until(lambda: bool(acked))
    assert len(server.accepted) == 12  # every score had arrived when the acknowledgement came
    await exporter.shutdown(2)


async def test_a_dropped_score_releases_its_acknowledgement(server: FakeLangfuse) -> None:
    tm = Telemetry()
    server.plan(Planned(400, body={"message": "bad"}))
    exporter = exporter_for(server, tm)
    await exporter.start()
    delivery = Delivery()
    token = export_ack.set(delivery)
    try:
        await exporter.export(cases(3))
    finally:
        export_ack.reset(token)
    delivery.seal()
    await wait_until(lambda: delivery.done)
    assert count(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 3
    await exporter.shutdown(2)


async def test_a_server_down_past_max_elapsed_time_drops_with_a_reason(server: FakeLangfuse) -> None:
    tm = Telemetry()
    await server.stop()
    exporter = exporter_for(server, tm, retry_on_failure={"initial_interval": "50ms", "max_interval": "100ms",
                                                          "max_elapsed_time": "400ms"})
    await exporter.start()
    await exporter.export(cases(7))
    await wait_until(lambda: count(tm, "evald_exporter_dropped_scores_total", reason="retries_exhausted") == 7)
    await server.start()
    await exporter.export(cases(2, start=7))
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert len(server.accepted) == 2
    assert count(tm, "evald_exporter_sent_scores_total") == 2


async def test_shutdown_flushes_queued_scores_within_its_deadline(server: FakeLangfuse) -> None:
    tm = Telemetry()
    exporter = exporter_for(server, tm, rate_limit_per_minute=600, batch_size=2)  # one request per 0.1 s
    await exporter.start()
    await exporter.export(cases(12))
    t0 = time.monotonic()
    await exporter.shutdown(5)
    assert time.monotonic() - t0 < 2
    assert len(server.accepted) == 12 and not server.duplicates()


async def test_shutdown_counts_what_the_deadline_leaves(server: FakeLangfuse) -> None:
    tm = Telemetry()
    exporter = exporter_for(server, tm, rate_limit_per_minute=60, batch_size=1)  # one request per second
    await exporter.start()
    await exporter.export(cases(10))
    t0 = time.monotonic()
    await exporter.shutdown(1.5)
    assert time.monotonic() - t0 < 2.5
    arrived = len(server.accepted)
    assert 1 <= arrived <= 3
    assert count(tm, "evald_exporter_dropped_scores_total", reason="shutdown") == 10 - arrived
