"""The judge's verdict cache shared by every replica: the in-process LRU+TTL cache (``VerdictCache``, with its
single-flight inside one process) in front of Redis.

A miss in process asks Redis in one script: the verdict (``<prefix>:judge:<name>:verdict:<key>``, stored with the
cache's ``ttl``) if another replica made it, else a lock (``...:lock:<key>``, ``SET NX`` with the call's deadline as
its expiry). The replica that gets the lock asks the judge, stores the verdict and frees the lock in one more
script. A replica that finds the lock taken waits for that verdict, asking again every 50 ms for up to
``coordination.cache_wait``; if the lock goes away without a verdict (the call failed: errors and skips are not
stored) it takes the lock itself, and after ``cache_wait`` it asks the judge itself. A verdict found in Redis is a
cache hit (``evald_judge_cache_requests_total{result="hit"}``): no provider call, nothing billed. Keys hold no case
text (the key is ``cache_key``'s SHA-256); the value is the verdict (reasoning and integers).

Fallback (Redis unreachable or slower than ``redis.timeout``): the in-process cache alone, counted
``evald_judge_coordination_fallbacks_total{component="cache"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable

from evald.judges.cache import VerdictCache
from evald.judges.config import CacheConfig
from evald.judges.coordination.link import CoordinationDown, RedisLink
from evald.judges.coordination.telemetry import CoordinationTelemetry
from evald.judges.prompting import Verdict

_GET_OR_LOCK = """
local found = redis.call('GET', KEYS[1])
if found then return {'hit', found} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'lead', ''} end
return {'wait', ''}
"""
_STORE = """
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
"""
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_POLL = 0.05


def _encode(verdict: Verdict) -> str:
    return json.dumps({"reasoning": verdict.reasoning, "values": verdict.values}, separators=(",", ":"))


def _decode(raw: bytes | str) -> Verdict:
    data = json.loads(raw)
    values = data["values"]
    if not isinstance(data["reasoning"], str) or not isinstance(values, dict) or not all(
            isinstance(k, str) and type(v) is int for k, v in values.items()):
        raise ValueError("not a verdict")
    return Verdict(data["reasoning"], values)


class SharedVerdictCache(VerdictCache[Verdict]):
    def __init__(self, config: CacheConfig, link: RedisLink, lock_seconds: float, wait: float,
                 telemetry: CoordinationTelemetry) -> None:
        super().__init__(config)
        self._link = link
        self._ttl_ms = int(config.ttl * 1000)
        self._lock_ms = int(lock_seconds * 1000) + 1000
        self._wait = wait
        self._tm = telemetry

    async def get_or_call(self, key: str, call: Callable[[], Awaitable[Verdict]]) -> tuple[Verdict, bool]:
        shared_hit = False

        async def lead() -> Verdict:
            nonlocal shared_hit
            found, token = await self._find_or_lock(key)
            if found is not None:
                shared_hit = True
                return found
            try:
                verdict = await call()
            except BaseException:
                if token is not None:
                    await self._unlock(key, token)
                raise
            await self._store(key, token, verdict)
            return verdict

        verdict, hit = await super().get_or_call(key, lead)
        return verdict, hit or shared_hit

    async def _find_or_lock(self, key: str) -> tuple[Verdict | None, str | None]:
        """(a verdict another replica made, None) or (None, the lock's token: this replica asks the judge;
        None when Redis cannot be used or the wait ran out)."""
        token = uuid.uuid4().hex
        keys = (self._link.key("verdict", key), self._link.key("lock", key))
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self._wait
        while True:
            try:
                kind, raw = await self._link.run("cache_lookup", lambda: self._link.script(
                    _GET_OR_LOCK, keys, (token, self._lock_ms)))
            except CoordinationDown as down:
                self._tm.fallbacks.labels(self._link.judge, "cache", down.reason).inc()
                return None, None
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            if kind == "hit":
                try:
                    return _decode(raw), None
                except (ValueError, KeyError, TypeError):
                    return None, None  # not a verdict: judge again (and overwrite it)
            if kind == "lead":
                return None, token
            if loop.time() >= give_up:
                return None, None
            await asyncio.sleep(_POLL)

    async def _store(self, key: str, token: str | None, verdict: Verdict) -> None:
        keys = (self._link.key("verdict", key), self._link.key("lock", key))
        try:
            await self._link.run("cache_store", lambda: self._link.script(
                _STORE, keys, (token or "", _encode(verdict), self._ttl_ms)))
        except CoordinationDown as down:
            self._tm.fallbacks.labels(self._link.judge, "cache", down.reason).inc()

    async def _unlock(self, key: str, token: str) -> None:
        with contextlib.suppress(CoordinationDown):  # else the lock expires with the call's deadline
            await self._link.run("cache_unlock", lambda: self._link.script(_UNLOCK, (self._link.key("lock", key),),
                                                                           (token,)))
