"""The Redis link's failure semantics: a server that accepts and never answers (a hung Redis) costs one deadline
per call; one late answer sends only that call to the fallback, a second marks the link down (calls then fail
fast without waiting), and a real redis-server on that port brings it back without a restart."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.coordination.config import CoordinationConfig
from evald.judges.coordination.link import CoordinationDown, RedisLink
from evald.judges.coordination.telemetry import CoordinationTelemetry
from tests.judges.redis_server import RedisServer

pytestmark = pytest.mark.integration


async def test_a_hung_redis_costs_two_deadlines_then_calls_fail_fast_until_it_answers(tmp_path: Path) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(-1)  # reads everything, answers nothing
        writer.close()

    hung = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    registry = CollectorRegistry()
    config = CoordinationConfig.model_validate({"redis": {"url": f"redis://127.0.0.1:{port}/0", "timeout": "0.2s"},
                                                "reconnect_max_interval": "0.2s"})
    link = RedisLink("default", config, CoordinationTelemetry(registry))
    reasons, waits = [], []
    for _ in range(3):
        started = time.monotonic()
        with pytest.raises(CoordinationDown) as down:
            await link.run("get", lambda: link.client.get("k"))
        waits.append(time.monotonic() - started)
        reasons.append((down.value.reason, link.up))
    assert reasons == [("timeout", True), ("timeout", False), ("timeout", False)]
    assert waits[0] >= 0.19 and waits[1] >= 0.19 and waits[2] < 0.05  # down: no wait
    assert registry.get_sample_value("evald_judge_coordination_redis_errors_total",
                                     {"judge": "default", "reason": "timeout"}) == 2
    hung.close()
    await hung.wait_closed()
    server = RedisServer(tmp_path, port=port).start()  # a real Redis on the same address
    try:
        async with asyncio.timeout(5):
            await link.wait_up()
        assert await link.run("set", lambda: link.client.set("k", "v")) is True
        assert registry.get_sample_value("evald_judge_coordination_up", {"judge": "default"}) == 1
    finally:
        await link.aclose()
        server.stop()
