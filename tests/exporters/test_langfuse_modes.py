"""Langfuse exporter against both server behaviours: one that takes JSON arrays of scores (the Python SDK 5 API) and
one that takes one object per request (the server code of August 2026), with the local stand-in; every body the
stand-in accepted is validated with the Langfuse SDK's own models."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evald.case import EvalCase, Score
from evald.exporters.acks import export_ack
from evald.exporters.langfuse import LangfuseExporter, LangfuseExporterConfig, expects_object
from evald.exporters.sending import DROP_REASONS
from evald.model import Delivery, ScoredCase
from evald.telemetry import Telemetry
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, Planned, sdk_validate

pytestmark = pytest.mark.integration

SWITCHES = "evald_exporter_langfuse_mode_switches_total"


@pytest.fixture
async def objects_only() -> AsyncIterator[FakeLangfuse]:
    fake = await FakeLangfuse(objects_only=True).start()
    yield fake
    await fake.stop()


def exporter_for(server: FakeLangfuse, tm: Telemetry, **overrides: Any) -> LangfuseExporter:
    raw: dict[str, Any] = {
        "host": server.url, "public_key": PUBLIC_KEY, "secret_key": SECRET_KEY, "rate_limit_per_minute": 0,
        "timeout": "2s", "retry_on_failure": {"initial_interval": "50ms", "max_interval": "100ms"},
        "sending_queue": {"queue_size": 200, "num_consumers": 4},
    }
    return LangfuseExporter(LangfuseExporterConfig.model_validate({**raw, **overrides}), tm)


def cases(n: int, start: int = 0) -> list[ScoredCase]:
    """``n`` trace cases with one score each (so scores = cases)."""
    return [ScoredCase(EvalCase(trace_id=f"{i:032x}", span_id=f"{i:016x}", scope="trace",
                                metadata={"span_end_unix_nano": 1_780_000_000_000_000_000 + i}),
                       (Score("latency", 0.5, 0.5, f"case {i}"),)) for i in range(start, start + n)]


def count(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": "langfuse", **labels}) or 0.0


def dropped(tm: Telemetry) -> float:
    return sum(count(tm, "evald_exporter_dropped_scores_total", reason=r) for r in DROP_REASONS)


def comments(server: FakeLangfuse) -> list[str]:
    return sorted(s["comment"] for s in server.accepted)


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "condition not met in time"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("takes_arrays", [True, False])
async def test_both_servers_store_every_score_once_with_bodies_the_sdk_accepts(takes_arrays: bool) -> None:
    server = await FakeLangfuse(objects_only=not takes_arrays).start()
    try:
        tm = Telemetry()
        exporter = exporter_for(server, tm)
        await exporter.start()
        await exporter.export(cases(7))
        assert await exporter.queue.drain(10)
        await exporter.shutdown(5)
    finally:
        await server.stop()
    for request in server.requests:
        if 200 <= request.status < 300:
            sdk_validate(request.body)
    assert comments(server) == sorted(f"case {i}" for i in range(7))
    assert not server.duplicates()
    assert count(tm, "evald_exporter_sent_scores_total") == 7 and dropped(tm) == 0
    assert count(tm, "evald_exporter_retries_total", reason="error") == 0  # the refused array is not a retry
    if takes_arrays:
        assert [r.status for r in server.requests] == [202] and isinstance(server.requests[0].body, list)
        assert not exporter.object_mode and count(tm, SWITCHES, mode="object") == 0
    else:  # the refused array, then its 7 scores one per request
        assert [r.status for r in server.requests] == [400] + [200] * 7
        assert all(isinstance(r.body, dict) for r in server.requests[1:])
        assert exporter.object_mode and count(tm, SWITCHES, mode="object") == 1


async def test_after_the_switch_later_batches_go_straight_to_objects_and_it_is_logged_once(
        objects_only: FakeLangfuse, caplog: pytest.LogCaptureFixture) -> None:
    tm = Telemetry()
    objects_only.delay = 0.05  # the first arrays are all in flight when the first 400 comes back
    exporter = exporter_for(objects_only, tm, batch_size=5)
    await exporter.start()
    with caplog.at_level(logging.WARNING, logger="evald.exporters.langfuse"):
        await exporter.export(cases(20))  # 4 batches of 5 taken by 4 consumers at once: 4 arrays refused
        await wait_until(lambda: len(objects_only.accepted) == 20)
        arrays = sum(isinstance(r.body, list) for r in objects_only.requests)
        assert 1 <= arrays <= 4
        before = len(objects_only.requests)
        await exporter.export(cases(10, start=20))
        assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    later = objects_only.requests[before:]
    assert len(later) == 10 and all(isinstance(r.body, dict) and r.status == 200 for r in later)
    assert comments(objects_only) == sorted(f"case {i}" for i in range(30))
    assert count(tm, "evald_exporter_sent_scores_total") == 30 and dropped(tm) == 0
    assert count(tm, SWITCHES, mode="object") == 1
    switched = [r for r in caplog.records if "one score per request" in r.getMessage()]
    assert len(switched) == 1 and objects_only.url in switched[0].getMessage()


async def test_object_mode_keeps_to_num_consumers_concurrent_requests(objects_only: FakeLangfuse) -> None:
    tm = Telemetry()
    objects_only.delay = 0.1
    exporter = exporter_for(objects_only, tm, sending_queue={"queue_size": 100, "num_consumers": 3})
    await exporter.start()
    await exporter.export(cases(15))  # one batch of 15: refused, then 15 objects fanned out
    await exporter.export(cases(6, start=15))  # queued meanwhile: taken one by one by the other consumers
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert objects_only.max_concurrent == 3  # as concurrent as allowed, never more
    assert len(objects_only.accepted) == 21 and dropped(tm) == 0


async def test_object_mode_spaces_requests_by_the_rate_limit(objects_only: FakeLangfuse) -> None:
    tm = Telemetry()
    exporter = exporter_for(objects_only, tm, rate_limit_per_minute=600)  # one request per 0.1 s
    await exporter.start()
    start = time.monotonic()
    await exporter.export(cases(6))
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    times = [r.at for r in objects_only.requests]
    assert len(times) == 7  # the refused array and 6 objects: 7 tokens
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.08, gaps
    assert time.monotonic() - start >= 0.6


async def test_a_score_is_acknowledged_only_when_its_own_request_succeeded(objects_only: FakeLangfuse) -> None:
    tm = Telemetry()
    # after the refused array: one object answered 500 (retried), one refused for good (dropped and counted)
    objects_only.plan(Planned(400, body={"message": "Invalid request data", "error": [
        {"expected": "object", "code": "invalid_type", "path": [], "message": "Invalid input: expected object, "
         "received array"}]}), Planned(500), Planned(400, body={"message": "Invalid request data", "error": [
             {"code": "custom", "path": ["traceId"], "message": "Provide exactly one of ..."}]}))
    exporter = exporter_for(objects_only, tm)
    await exporter.start()
    at_ack: list[int] = []
    delivery = Delivery(lambda: at_ack.append(len(objects_only.accepted)))
    token = export_ack.set(delivery)
    try:
        await exporter.export(cases(8))
    finally:
        export_ack.reset(token)
    delivery.seal()
    await wait_until(lambda: delivery.done)
    assert at_ack == [7]  # 7 stored, 1 refused for good: nothing was pending when the ack came
    assert count(tm, "evald_exporter_sent_scores_total") == 7
    assert count(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 1
    assert count(tm, "evald_exporter_retries_total", reason="server_error") == 1
    assert not objects_only.duplicates()
    await exporter.shutdown(2)


async def test_a_4xx_that_is_not_the_array_mismatch_stays_permanent(objects_only: FakeLangfuse) -> None:
    tm = Telemetry()
    objects_only.plan(Planned(400, body={"message": "Invalid request data", "error": [
        {"code": "invalid_type", "expected": "object", "path": [0, "metadata"], "message": "Invalid input"}]}),
        Planned(422, body={"message": "Score value out of range"}), Planned(404, body={"message": "Not found"}))
    exporter = exporter_for(objects_only, tm, sending_queue={"queue_size": 100, "num_consumers": 1}, batch_size=4)
    await exporter.start()
    await exporter.export(cases(12))
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert [r.status for r in objects_only.requests] == [400, 422, 404]
    assert count(tm, "evald_exporter_dropped_scores_total", reason="permanent_error") == 12
    assert not exporter.object_mode and count(tm, SWITCHES, mode="object") == 0


async def test_the_switch_with_a_persistent_queue_delivers_and_empties_it(objects_only: FakeLangfuse,
                                                                          tmp_path: Path) -> None:
    tm = Telemetry()
    exporter = exporter_for(objects_only, tm, sending_queue={"storage": {"directory": str(tmp_path)}})
    await exporter.start()
    await exporter.export(cases(9))
    assert await exporter.queue.drain(10)
    await exporter.shutdown(5)
    assert comments(objects_only) == sorted(f"case {i}" for i in range(9))
    again = exporter_for(objects_only, Telemetry(), sending_queue={"storage": {"directory": str(tmp_path)}})
    await again.start()
    assert again.queue.pending == 0  # every row was deleted once its score was stored
    await again.shutdown(1)


def test_expects_object_reads_the_servers_validation_answer() -> None:
    request = httpx.Request("POST", "http://x/api/public/scores")

    def answer(status: int, **kwargs: Any) -> httpx.Response:
        return httpx.Response(status, request=request, **kwargs)

    root = {"expected": "object", "code": "invalid_type", "path": [], "message": "Invalid input: expected object, "
            "received array"}
    assert expects_object(answer(400, json={"message": "Invalid request data", "error": [root]}))
    zod3 = {"code": "invalid_type", "expected": "object", "received": "array", "path": [],
            "message": "Expected object, received array"}
    assert expects_object(answer(400, json={"message": "Invalid request data", "error": [zod3]}))
    assert expects_object(answer(400, json={"message": "Expected object, received array"}))
    assert expects_object(answer(400, text="Bad Request: expected an object but got an array"))
    nested = {**root, "path": [0, "metadata"]}
    assert not expects_object(answer(400, json={"message": "Invalid request data", "error": [nested]}))
    assert not expects_object(answer(400, json={"message": "Invalid request data"}))
    assert not expects_object(answer(400, json=["unexpected"]))
    assert not expects_object(answer(400, text="<html>Bad Request</html>"))
