"""The verdict cache on its own: keys, bounded LRU, TTL on a driven timer, single-flight, errors not kept."""

from __future__ import annotations

import asyncio

import pytest

from evald.judges.cache import VerdictCache, cache_key
from evald.judges.config import CacheConfig

DATA = [("output", "Paris.")]


class Timer:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_key_changes_with_metric_model_template_and_content_and_holds_no_text() -> None:
    key = cache_key("geval@1", "gpt-4o-mini", "task", DATA)
    assert key == cache_key("geval@1", "gpt-4o-mini", "task", list(DATA))
    others = {
        cache_key("geval@2", "gpt-4o-mini", "task", DATA), cache_key("faithfulness@1", "gpt-4o-mini", "task", DATA),
        cache_key("geval@1", "gpt-4o", "task", DATA), cache_key("geval@1", "gpt-4o-mini", "other task", DATA),
        cache_key("geval@1", "gpt-4o-mini", "task", [("output", "Lyon.")]),
        cache_key("geval@1", "gpt-4o-mini", "task", [("input", "Paris.")]),
    }
    assert key not in others and len(others) == 6
    assert "Paris" not in key and len(key) == 64


async def test_a_hit_until_the_ttl_then_a_new_call() -> None:
    timer, calls = Timer(), []

    async def call() -> str:
        calls.append(1)
        return f"verdict {len(calls)}"

    cache: VerdictCache[str] = VerdictCache(CacheConfig(ttl=60), timer)
    assert await cache.get_or_call("k", call) == ("verdict 1", False)
    timer.now = 59.0
    assert await cache.get_or_call("k", call) == ("verdict 1", True)
    timer.now = 60.0
    assert await cache.get_or_call("k", call) == ("verdict 2", False)
    assert len(calls) == 2


async def test_the_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    async def call() -> str:
        return "v"

    cache: VerdictCache[str] = VerdictCache(CacheConfig(max_entries=2), Timer())
    for key in ("a", "b"):
        await cache.get_or_call(key, call)
    assert (await cache.get_or_call("a", call))[1]  # a is now the most recently used
    await cache.get_or_call("c", call)  # evicts b
    assert len(cache) == 2
    assert (await cache.get_or_call("a", call))[1] and not (await cache.get_or_call("b", call))[1]


async def test_concurrent_identical_requests_share_one_call() -> None:
    release, calls = asyncio.Event(), []

    async def call() -> str:
        calls.append(1)
        await release.wait()
        return "shared"

    cache: VerdictCache[str] = VerdictCache(CacheConfig(), Timer())
    waiting = [asyncio.create_task(cache.get_or_call("k", call)) for _ in range(10)]
    await asyncio.sleep(0)  # let every request reach the cache before the call ends
    release.set()
    results = await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert len(calls) == 1
    assert sorted(hit for _, hit in results) == [False] + [True] * 9 and {v for v, _ in results} == {"shared"}


async def test_an_error_reaches_every_waiter_and_is_not_cached() -> None:
    release, calls = asyncio.Event(), []

    async def failing() -> str:
        calls.append(1)
        await release.wait()
        raise RuntimeError("judge down")

    cache: VerdictCache[str] = VerdictCache(CacheConfig(), Timer())
    waiting = [asyncio.create_task(cache.get_or_call("k", failing)) for _ in range(3)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), 5)
    assert len(calls) == 1 and all(isinstance(r, RuntimeError) for r in results)

    async def working() -> str:
        return "ok"

    assert await cache.get_or_call("k", working) == ("ok", False)  # the error was not kept


async def test_a_cancelled_leader_hands_the_call_to_a_waiter() -> None:
    started, calls = asyncio.Event(), []

    async def call() -> str:
        calls.append(1)
        if len(calls) == 1:
            started.set()
            await asyncio.sleep(3600)  # the leader's call: cancelled below
        return "second call"

    cache: VerdictCache[str] = VerdictCache(CacheConfig(), Timer())
    leader = asyncio.create_task(cache.get_or_call("k", call))
    await asyncio.wait_for(started.wait(), 5)
    follower = asyncio.create_task(cache.get_or_call("k", call))
    await asyncio.sleep(0)
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    assert await asyncio.wait_for(follower, 5) == ("second call", False)
    assert len(calls) == 2
