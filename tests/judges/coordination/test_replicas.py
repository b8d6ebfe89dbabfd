"""Three ``evald run`` processes judging concurrently with one judge coordinated through a real redis-server,
against the stand-in served from this test process (real openai SDK in each evald): together they never pass the
shared token budget or the shared RPM (what the stand-in billed and when), a Redis killed mid-run and restarted
keeps spend within the documented fallback bound and evald uses Redis again, and a case judged by one replica is a
cache hit on another (no provider call)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from evald.config.loader import parse_config
from evald.replay import replay
from tests.integration.daemon import Daemon
from tests.judges.fake_llm import FakeLLM, Reply
from tests.judges.load_traces import CORPUS, renumbered, templates
from tests.judges.redis_server import RedisServer, redis_server
from tests.metrics.local_http import serve

pytestmark = pytest.mark.integration
SCENARIO = ("a_chat_correct",)
JUDGE = "provider: openai, model: gpt-4o-mini, api_key: sk-test-not-a-real-key, max_output_tokens: 16"


@dataclass
class _TimedLLM(FakeLLM):
    """The stand-in, also noting when each request arrived."""

    arrivals: list[float] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.arrivals.append(time.monotonic())
        return await super().handle(request)


@asynccontextmanager
async def _stand_in() -> AsyncIterator[_TimedLLM]:
    llm = _TimedLLM()
    llm.default = Reply(text='{"reasoning": "on topic", "score": 5}', bill_worst=True)
    async with serve(llm.handle) as server:
        llm.server = server
        yield llm


async def _billed_per_call(llm: FakeLLM) -> int:
    """What one judged case bills at the worst case (stand-in ``bill_worst``), measured with an in-process replay
    of the same case and judge (the prompt's length is fixed: fixed-size nonce)."""
    config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
judges:
  default: {{ {JUDGE}, base_url: "{llm.base_url}/v1", cache: {{ enabled: false }} }}
metrics:
  - {{ kind: answer_relevancy, scope: trace }}
""")
    before = llm.billed_tokens
    await replay([CORPUS / f"{SCENARIO[0]}.pb"], config)
    return llm.billed_tokens - before


def _body(llm: FakeLLM, redis: RedisServer, judge: str) -> str:
    return f"""
assembly: {{ settle: 0s, decision_wait: 1s }}
pipeline: {{ workers: 8, metric_timeout: 10s }}
judges:
  default: {{ {JUDGE}, base_url: "{llm.base_url}/v1", timeout: 3s, max_retries: 0, max_concurrency: 8, {judge},
             coordination: {{ redis: {{ url: "{redis.url}", key_prefix: e2e, timeout: 2s }}, expected_replicas: 3,
                              reconnect_max_interval: 0.3s }} }}
metrics:
  - {{ kind: answer_relevancy, scope: trace }}
"""


class Replicas:
    def __init__(self, tmp: Path, body: str, count: int = 3) -> None:
        self.daemons = []
        for index in range(count):
            (tmp / f"r{index}").mkdir()
            self.daemons.append(Daemon(tmp / f"r{index}", body))
        self.sent = [0] * count
        self._next = 1

    async def __aenter__(self) -> Replicas:
        # three interpreters starting at once: ~3 s on an idle 2-core machine, up to ~25 s on a loaded one
        await asyncio.gather(*(asyncio.to_thread(d.start, 60.0) for d in self.daemons))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(asyncio.to_thread(d.stop) for d in self.daemons))

    async def send(self, per_replica: int, only: int | None = None) -> None:
        """``per_replica`` distinct traces (fresh ids, same content) to each replica (or replica ``only``)."""
        template = templates(SCENARIO)[0]
        async with httpx.AsyncClient(timeout=5) as client:
            for index, daemon in enumerate(self.daemons):
                if only is not None and index != only:
                    continue
                for _ in range(per_replica):
                    body = renumbered(template, self._next).SerializeToString()
                    self._next += 1
                    reply = await client.post(f"http://127.0.0.1:{daemon.http_port}/v1/traces", content=body,
                                              headers={"content-type": "application/x-protobuf"})
                    assert reply.status_code == 200
                self.sent[index] += per_replica

    async def values(self, name: str, **labels: str) -> list[float]:
        async with httpx.AsyncClient(timeout=2) as client:
            texts = [(await client.get(f"{d.metrics_url}/metrics")).text for d in self.daemons]
        return [sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
                    if s.name == name and labels.items() <= s.labels.items()) for text in texts]

    async def until_up(self, timeout: float = 10.0) -> None:
        """Until every replica reaches Redis again (``evald_judge_coordination_up`` 1 on each)."""
        async with asyncio.timeout(timeout):
            while True:
                if sum(await self.values("evald_judge_coordination_up")) == len(self.daemons):
                    return
                await asyncio.sleep(0.1)

    async def settled(self, timeout: float = 15.0) -> None:
        """Until every case sent was judged, refused or given up (one judge outcome or cache hit each)."""
        async with asyncio.timeout(timeout):
            while True:
                done = [a + b for a, b in zip(await self.values("evald_judge_requests_total"),
                                               await self.values("evald_judge_cache_requests_total", result="hit"),
                                               strict=True)]
                if all(d >= s for d, s in zip(done, self.sent, strict=True)):
                    return
                await asyncio.sleep(0.1)


async def test_three_replicas_never_pass_the_shared_token_budget(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with _stand_in() as llm:
            worst = await _billed_per_call(llm) + 32  # + the framing the worst case adds
            limit, calibration = 6 * worst, len(llm.received)
            async with Replicas(tmp_path, _body(llm, redis, f"budget: {{ max_tokens: {{ hour: {limit} }} }}, "
                                                   "cache: { enabled: false }")) as replicas:
                await replicas.send(10)
                await replicas.settled()
                refused = sum(await replicas.values("evald_judge_requests_total", outcome="budget_exhausted"))
                fallbacks = sum(await replicas.values("evald_judge_coordination_fallbacks_total"))
            sent = len(llm.received) - calibration
            billed = llm.billed_tokens - (worst - 32)
    assert sent == 6 and refused == 24  # alone, each replica would have sent 6: 18 in all
    assert billed <= limit and fallbacks == 0


async def test_three_replicas_never_pass_the_shared_rpm(tmp_path: Path) -> None:
    rpm = 6  # a burst of 6, then one every 10 s
    with redis_server(tmp_path) as redis:
        async with _stand_in() as llm, Replicas(tmp_path, _body(llm, redis, f"requests_per_minute: {rpm}, "
                                               "cache: { enabled: false }")) as replicas:
            started = time.monotonic()
            await replicas.send(8)
            await replicas.settled()
            elapsed = time.monotonic() - started
            timeouts = sum(await replicas.values("evald_judge_requests_total", outcome="timeout"))
    # GCRA: at most the burst + rate x elapsed; alone, each replica would have sent its own burst of 6 (18)
    assert len(llm.arrivals) <= rpm + elapsed * rpm / 60 + 1
    assert len(llm.arrivals) >= rpm and timeouts == 24 - len(llm.arrivals)  # the rest waited past their deadline


async def test_redis_killed_mid_run_stays_within_the_fallback_bound_and_recovers(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path).start()
    try:
        async with _stand_in() as llm:
            worst = await _billed_per_call(llm) + 32
            limit, calibration = 9 * worst, len(llm.received)
            async with Replicas(tmp_path, _body(llm, redis, f"budget: {{ max_tokens: {{ hour: {limit} }} }}, "
                                                   "cache: { enabled: false }")) as replicas:
                await replicas.send(1)  # 3 calls through Redis
                await replicas.settled()
                redis.stop()
                await replicas.send(5)  # in process: each replica its share, limit / 3 = 3 worst cases
                await replicas.settled()
                in_outage = len(llm.received) - calibration
                # any reason: a request in flight when Redis died may end as a timeout on a slow machine
                fallbacks = sum(await replicas.values("evald_judge_coordination_fallbacks_total",
                                                      component="budget"))
                redis.start()
                await replicas.until_up()
                before = sum(await replicas.values("evald_judge_coordination_reservations_total", result="refused"))
                await replicas.send(2)
                await replicas.settled()
                after = sum(await replicas.values("evald_judge_coordination_reservations_total", result="refused"))
                reconnects = sum(await replicas.values("evald_judge_coordination_reconnects_total"))
            sent = len(llm.received) - calibration
            billed = llm.billed_tokens - (worst - 32)
    finally:
        redis.stop()
    assert in_outage == 3 + 9 and fallbacks == 15  # 3 before, then 3 x the share of 3
    # Redis came back empty; the 9 calls of the outage were added to it by the replicas: the window is full
    assert sent == in_outage and after - before == 6 and reconnects == 3
    assert billed <= 2 * limit  # the documented bound for a window with an outage


async def test_a_case_judged_by_one_replica_is_a_cache_hit_on_another(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        async with _stand_in() as llm, Replicas(tmp_path, _body(llm, redis, "cache: { enabled: true }")) as replicas:
            await replicas.send(1, only=0)
            await replicas.settled()
            await replicas.send(1, only=1)
            await replicas.send(1, only=2)
            await replicas.settled()
            hits = await replicas.values("evald_judge_cache_requests_total", result="hit")
            scored = await replicas.values("evald_evaluations_total", metric="answer_relevancy")
    assert len(llm.received) == 1 and hits == [0, 1, 1] and scored == [1, 1, 1]
