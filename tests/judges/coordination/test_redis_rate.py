"""GCRA across replicas against a real redis-server: two limiters (two links, as two replicas) taking from one
shared limit never pass rate x time + burst in any interval, and fall back to their share without Redis."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.coordination.config import CoordinationConfig
from evald.judges.coordination.link import RedisLink
from evald.judges.coordination.redis_rate import SharedRate
from evald.judges.coordination.telemetry import CoordinationTelemetry
from tests.judges.redis_server import RedisServer, redis_server

pytestmark = pytest.mark.integration
RATE, BURST = 600.0, 5.0  # 10 per second


def _rate(url: str, registry: CollectorRegistry) -> tuple[SharedRate, RedisLink]:
    config = CoordinationConfig.model_validate({"redis": {"url": url, "key_prefix": "rate", "timeout": "0.2s"},
                                                "expected_replicas": 2})
    telemetry = CoordinationTelemetry(registry)
    link = RedisLink("default", config, telemetry)
    return SharedRate(link, "rpm", RATE, BURST, 2, telemetry), link


def _worst_window(stamps: list[float], width: float) -> int:
    stamps = sorted(stamps)
    return max(sum(1 for s in stamps[i:] if s - start <= width) for i, start in enumerate(stamps))


async def _take(replicas: tuple[SharedRate, SharedRate], count: int, stamps: list[float]) -> None:
    """``count`` acquisitions at once, alternating between the two replicas; when each passed goes to ``stamps``."""

    async def take(limiter: SharedRate) -> None:
        await limiter.acquire(1)
        stamps.append(time.monotonic())

    await asyncio.gather(*(take(replicas[i % 2]) for i in range(count)))


async def test_two_replicas_never_pass_the_shared_rate(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        (a, link_a), (b, link_b) = _rate(redis.url, CollectorRegistry()), _rate(redis.url, CollectorRegistry())
        stamps: list[float] = []
        started = time.monotonic()
        await _take((a, b), 25, stamps)
        elapsed = time.monotonic() - started
        await link_a.aclose()
        await link_b.aclose()
    # 5 at once, then 10 per second: the 25th no earlier than 2 s; alone, each replica's 12-13 would take ~0.8 s
    assert elapsed >= (25 - BURST) / (RATE / 60) - 0.05
    for width in (0.5, 1.0, 1.5):
        assert _worst_window(stamps, width) <= BURST + width * RATE / 60 + 1  # +1: both ends of the interval


async def test_switching_to_the_fallback_adds_no_burst(tmp_path: Path) -> None:
    """Redis lets the whole shared burst through, then dies: the replicas' fallback buckets start empty, so the
    burst already spent is not spent again in process (with full buckets, 2 x 2 calls would pass at once)."""
    with redis_server(tmp_path) as redis:
        (a, link_a), (b, link_b) = _rate(redis.url, CollectorRegistry()), _rate(redis.url, CollectorRegistry())
        stamps: list[float] = []
        await _take((a, b), int(BURST), stamps)  # the burst, through Redis
        redis.stop()
        stopped = time.monotonic()
        await _take((a, b), 4, stamps)  # two per replica, in process
        await link_a.aclose()
        await link_b.aclose()
    in_process = sorted(s - stopped for s in stamps[int(BURST):])
    # each replica's share is 5 per second from an empty bucket: its first call after 0.2 s, its second after 0.4 s
    assert in_process[0] >= 0.2 - 0.02
    assert in_process[-1] >= 0.4 - 0.02
    for width in (0.25, 0.5):
        assert _worst_window(stamps, width) <= BURST + width * RATE / 60 + 1


async def test_without_redis_each_replica_takes_its_share(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path)  # never started: nothing listens on its port
    registry = CollectorRegistry()
    limiter, link = _rate(redis.url, registry)
    started = time.monotonic()
    for _ in range(5):
        await limiter.acquire(1)
    elapsed = time.monotonic() - started
    await link.aclose()
    # the share: 5 per second with a burst of 2.5 (rate and burst / 2 replicas): the 5th after ~0.5 s
    assert 0.4 <= elapsed < 2.0
    assert registry.get_sample_value("evald_judge_coordination_fallbacks_total",
                                     {"judge": "default", "component": "rate", "reason": "unreachable"}) == 5
