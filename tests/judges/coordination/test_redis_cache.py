"""The shared verdict cache against a real redis-server and the stand-in (real openai SDK): a verdict one replica
bought is a hit on the other (no request), concurrent identical cases on two replicas send one request, and an
error is not shared (the next replica asks again)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from evald.judges.limiter import JudgeError
from tests.judges.coordination.replicas import ask, replica, sample
from tests.judges.fake_llm import Reply, fake_llm
from tests.judges.redis_server import redis_server

pytestmark = pytest.mark.integration
CACHE = {"enabled": True}


async def test_a_verdict_bought_by_one_replica_is_a_hit_on_the_other(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with fake_llm() as llm:
            llm.default = Reply(text='{"reasoning": "ok", "score": 4}')
            (first, reg_a), (second, reg_b) = (replica(llm, redis.url, cache=CACHE) for _ in range(2))
            assert await ask(first) == 4
            assert await ask(second) == 4
            assert await ask(second, "another output") == 4
            for judge in (first, second):
                await judge.aclose()
    assert len(llm.received) == 2  # the second replica's identical case was not sent
    assert sample(reg_b, "evald_judge_cache_requests_total", judge="default", result="hit") == 1
    assert sample(reg_b, "evald_judge_cache_requests_total", judge="default", result="miss") == 1
    assert sample(reg_a, "evald_judge_cache_requests_total", judge="default", result="miss") == 1


async def test_concurrent_identical_cases_on_two_replicas_send_one_request(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with fake_llm() as llm:
            llm.default = Reply(text='{"reasoning": "ok", "score": 3}', delay=0.3)
            judges = [replica(llm, redis.url, cache=CACHE)[0] for _ in range(2)]
            scores = await asyncio.gather(*(ask(judges[i % 2]) for i in range(10)))
            for judge in judges:
                await judge.aclose()
    assert scores == [3] * 10 and len(llm.received) == 1


async def test_an_error_is_not_shared_the_next_replica_asks_again(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with fake_llm() as llm:
            llm.then(Reply(status=500))
            llm.default = Reply(text='{"reasoning": "ok", "score": 5}')
            (first, _), (second, _) = (replica(llm, redis.url, cache=CACHE, max_retries=0) for _ in range(2))
            with pytest.raises(JudgeError):
                await ask(first)
            started = time.monotonic()
            assert await ask(second) == 5
            waited = time.monotonic() - started
            assert await ask(first) == 5  # now a hit
            for judge in (first, second):
                await judge.aclose()
    assert len(llm.received) == 2
    assert waited < 1.0  # the failed call freed its lock: no wait for cache_wait (2 s)
