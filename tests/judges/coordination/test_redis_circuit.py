"""Shared circuit state against a real redis-server: failures seen by one replica open the circuit for the
other (it fails fast without sending) until ``reset_after``; then a trial call closes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evald.judges.limiter import JudgeError, JudgeSkipped
from tests.judges.coordination.replicas import ask, replica
from tests.judges.fake_llm import Reply, fake_llm
from tests.judges.redis_server import redis_server

pytestmark = pytest.mark.integration


async def test_failures_on_one_replica_open_the_circuit_on_the_other(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with fake_llm() as llm:
            llm.then(*(Reply(status=500) for _ in range(3)))
            llm.default = Reply(text='{"reasoning": "ok", "score": 5}')
            breaker = {"failures": 3, "reset_after": "0.6s"}
            (first, _), (second, _) = (replica(llm, redis.url, max_retries=0, circuit_breaker=breaker)
                                       for _ in range(2))
            for _ in range(2):
                with pytest.raises(JudgeError):
                    await ask(first)
            with pytest.raises(JudgeError):
                await ask(second)  # the third failure in all: the shared count reaches the threshold
            await asyncio.sleep(0.3)  # the reports and one read of the shared state land
            for judge in (first, second):
                with pytest.raises(JudgeSkipped) as skipped:
                    await ask(judge)
                assert skipped.value.outcome == "circuit_open"
            sent_while_open = len(llm.received)
            await asyncio.sleep(0.5)
            assert await ask(first) == 5  # after reset_after: the trial call closes it
            for judge in (first, second):
                await judge.aclose()
    assert sent_while_open == 3
