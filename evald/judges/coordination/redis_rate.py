"""A judge's requests- and tokens-per-minute limits shared by every replica: GCRA in one Lua script.

Why GCRA (the generic cell rate algorithm, as in redis-cell and throttled): one key per limit holding one number
(the theoretical arrival time), O(1) per request whatever the rate, no sorted set that grows with the requests of
the window (a sliding log's cost), and exact under concurrency because the check and the update are one script
with Redis' own clock (``TIME``), so the replicas' clocks do not matter. It is the token bucket the in-process
limiter uses (``TokenBucket``: ``rate`` per minute, a burst of one minute's worth), expressed as a time: a request
of ``amount`` is admitted when ``tat + amount x interval - now <= burst x interval``, else the script answers how
long to wait and the caller sleeps and asks again (within the call's deadline, which the limiter applies).

Fallback (Redis unreachable or slower than ``redis.timeout``): an in-process ``TokenBucket`` with the rate and the
burst divided by ``expected_replicas``, counted ``evald_judge_coordination_fallbacks_total{component="rate"}``.
A replica that switches to it after Redis admitted its calls finds it empty: Redis may have just let the whole
shared burst through, and every replica's bucket starting full would add their bursts on top of it (up to one extra
burst at each switch). So across the switch the replicas together pass at most the shared burst plus the rate; a
replica that never reached Redis starts with its full share.
"""

from __future__ import annotations

import asyncio

from evald.exporters.sending_policy import TokenBucket
from evald.judges.coordination.link import CoordinationDown, RedisLink
from evald.judges.coordination.telemetry import CoordinationTelemetry

_GCRA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval, tolerance, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next_tat = tat + amount * interval
local wait = next_tat - tolerance - now
if wait > 0 then return tostring(wait) end
redis.call('SET', KEYS[1], string.format('%.6f', next_tat), 'PX', math.ceil((next_tat - now) * 1000) + 1000)
return '0'
"""
_MIN_WAIT = 0.005


class SharedRate(TokenBucket):
    """``rate_per_minute`` units per minute across replicas, at most ``burst`` at once (``acquire`` as
    ``TokenBucket.acquire``)."""

    def __init__(self, link: RedisLink, name: str, rate_per_minute: float, burst: float, replicas: int,
                 telemetry: CoordinationTelemetry) -> None:
        super().__init__(rate_per_minute, burst)
        self._link = link
        self._key = link.key("rate", name)
        self._name = name
        self._interval = 60.0 / rate_per_minute
        self._tm = telemetry
        self._local = TokenBucket(rate_per_minute / replicas, burst=max(1.0, burst / replicas))
        self._via_redis = False  # the last call was admitted by Redis: the next fallback starts empty

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(amount, self.capacity)
        args = (repr(self._interval), repr(self.capacity * self._interval), repr(amount))
        while True:
            try:
                reply = await self._link.run(self._name, lambda: self._link.script(_GCRA, (self._key,), args))
            except CoordinationDown as down:
                self._tm.fallbacks.labels(self._link.judge, "rate", down.reason).inc()
                if self._via_redis:
                    self._via_redis = False
                    self._local.drain()
                await self._local.acquire(amount)
                return
            self._via_redis = True
            wait = float(reply)
            if wait <= 0:
                return
            await asyncio.sleep(max(wait, _MIN_WAIT))
