"""The shared budget against a real redis-server: two replicas of one judge, concurrent calls through the real
openai SDK to the stand-in; the shared window holds exactly, a Redis outage falls back to each replica's share
(counted), and the next call after Redis is back uses it again with the outage's spend added."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evald.judges.judge import Judge
from evald.judges.limiter import JudgeSkipped
from tests.judges.coordination.replicas import ask, replica, sample
from tests.judges.fake_llm import Reply, fake_llm
from tests.judges.redis_server import RedisServer, redis_server

pytestmark = pytest.mark.integration


async def _outcomes(judges: list[Judge], calls: int) -> tuple[int, int]:
    results = await asyncio.gather(*(ask(judges[i % len(judges)], f"case {i:04d}") for i in range(calls)),
                                   return_exceptions=True)
    skipped = [r for r in results if isinstance(r, JudgeSkipped)]
    assert all(isinstance(r, int | JudgeSkipped) for r in results), results
    assert all(s.outcome == "budget_exhausted" for s in skipped)
    return len(results) - len(skipped), len(skipped)


def _worst_tokens(judge: Judge, text: str = "case 0000") -> int:
    from evald.judges.judge import sent_text
    from evald.judges.prompting import build_prompt
    from tests.judges.coordination.replicas import SCORE, TASK

    return judge.limiter.worst_case(sent_text(build_prompt(TASK, [("output", text)], SCORE), SCORE)).tokens


async def test_two_replicas_share_one_token_window_exactly(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with fake_llm() as llm:
            llm.default = Reply(bill_worst=True, delay=0.05)  # bills right up to the worst case
            probe, _ = replica(llm, redis.url)
            limit = 5 * _worst_tokens(probe)
            await probe.aclose()
            pair = [replica(llm, redis.url, budget={"max_tokens": {"hour": limit}})for _ in range(2)]
            judges = [judge for judge, _ in pair]
            judged, refused = await _outcomes(judges, 30)
            await asyncio.sleep(0.2)  # the settlements (tasks) land
            assert await _outcomes(judges, 2) == (0, 2)  # each refusal reads the shared window
            for judge in judges:
                await judge.aclose()
    assert judged == 5 and refused == 25 # 15 calls per replica: alone, each would have judged 5
    assert len(llm.received) == 5 and llm.billed_tokens <= limit
    admitted = sum(sample(r, "evald_judge_coordination_reservations_total", judge="default", result="admitted")
                   for _, r in pair)
    assert admitted == 5
    left = [sample(r, "evald_judge_coordination_budget_remaining", judge="default", unit="tokens", window="hour")
            for _, r in pair]
    assert left == [limit - llm.billed_tokens] * 2  # both replicas see what the other spent


async def test_redis_outage_falls_back_to_the_replica_share_and_recovers(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path).start()
    try:
        async with fake_llm() as llm:
            llm.default = Reply(bill_worst=True)
            probe, _ = replica(llm, redis.url)
            worst = _worst_tokens(probe)
            await probe.aclose()
            limit = 8 * worst
            pair = [replica(llm, redis.url, budget={"max_tokens": {"hour": limit}}) for _ in range(2)]
            judges, registries = [j for j, _ in pair], [r for _, r in pair]
            assert await _outcomes(judges, 2) == (2, 0)  # through Redis
            redis.stop()
            judged, _ = await _outcomes(judges, 20)
            # each replica: its share, limit / 2 = 4 worst cases, in process
            assert judged == 8
            # a replica whose request was in flight when Redis died may see a timeout rather than a closed
            # connection (a slow machine): either way every call of the outage is a counted fallback
            fallbacks = sum(sample(r, "evald_judge_coordination_fallbacks_total", judge="default",
                                   component="budget", reason=reason)
                            for r in registries for reason in ("unreachable", "timeout"))
            assert fallbacks >= 20
            assert all(sample(r, "evald_judge_coordination_up", judge="default") == 0 for r in registries)
            sent_before_recovery = len(llm.received)
            redis.start()  # empty: the outage's spend (and the 2 calls before it) must come back from the replicas
            async with asyncio.timeout(5):
                await asyncio.gather(*(j.limiter.coordination.link.wait_up() for j in judges
                                       if j.limiter.coordination))
            judged_after, refused_after = await _outcomes(judges, 6)
            for judge in judges:
                await judge.aclose()
    finally:
        redis.stop()
    # back on Redis: the replicas' spend during the outage was added to the shared window (8 worst cases of the
    # outage; the 2 calls before it were lost with the killed Redis): nothing more fits
    assert sent_before_recovery == 10 and len(llm.received) == 10
    assert (judged_after, refused_after) == (0, 6)
    assert sum(sample(r, "evald_judge_coordination_reservations_total", judge="default", result="refused")
               for r in registries) == 6
    assert sum(sample(r, "evald_judge_coordination_reconnects_total", judge="default") for r in registries) == 2
    assert llm.billed_tokens <= 2 * limit  # the documented bound for a window with an outage
