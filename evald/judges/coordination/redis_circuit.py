"""A judge's circuit breaker with its state shared by every replica: a Redis hash
``<prefix>:judge:<name>:circuit`` holds the consecutive ``failures`` every replica saw and ``open_until`` (epoch
seconds).

Each replica keeps the in-process breaker (``CircuitBreaker``) and also reports to the hash: a failure increments
``failures`` and, at the threshold, one script sets ``open_until = now + reset_after`` and resets the count; a
success resets the count (only when a failure is known, to spare round trips). A replica learns the shared state
from those replies and from a read every ``min(1 s, reset_after / 4)``: while ``open_until`` is in the future its
own breaker is open too (it fails fast, ``circuit_open``), until that moment; then each replica lets one trial call
through (so up to one trial per replica, not one in all). The reports run in tasks off the call path (bounded:
at most 64 in flight, further ones dropped and counted as fallbacks).

Fallback (Redis unreachable): the in-process breaker alone, as without coordination, counted
``evald_judge_coordination_fallbacks_total{component="circuit"}``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from evald.judges.coordination.link import CoordinationDown, RedisLink
from evald.judges.coordination.telemetry import CoordinationTelemetry
from evald.judges.governors import CircuitBreaker, Clock
from evald.judges.telemetry import CIRCUIT_OPEN

_FAILURE = """
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local open_until = tonumber(redis.call('HGET', KEYS[1], 'open_until') or '0')
local now = tonumber(ARGV[1])
if failures >= tonumber(ARGV[2]) and open_until <= now then
  open_until = now + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'open_until', string.format('%.3f', open_until), 'failures', 0)
  failures = 0
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {tostring(failures), string.format('%.3f', open_until)}
"""
_MAX_PENDING = 64


class SharedCircuitBreaker(CircuitBreaker):
    def __init__(self, link: RedisLink, failures: int, reset_after: float, telemetry: CoordinationTelemetry,
                 clock: Clock = time.monotonic, wall_clock: Clock = time.time) -> None:
        super().__init__(failures, reset_after, clock)
        self._link = link
        self._key = link.key("circuit")
        self._tm = telemetry
        self._wall = wall_clock
        self._shared_failures = 0
        self._shared_open_until = 0.0
        self._pending: set[asyncio.Task[None]] = set()
        self._refresher: asyncio.Task[None] | None = None
        self._refresh_every = min(1.0, reset_after / 4)

    def allow(self) -> bool:
        if self._refresher is None:
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_loop())
        left = self._shared_open_until - self._wall()
        if left > 0 and self.state != CIRCUIT_OPEN:  # another replica opened it
            self.state = CIRCUIT_OPEN
            self._opened_at = self._clock() - self._reset_after + left
        return super().allow()

    def record_failure(self) -> None:
        super().record_failure()
        ttl = int(self._reset_after) + 3600
        args = (repr(self._wall()), self._threshold, repr(self._reset_after), ttl)
        self._report(lambda: self._link.script(_FAILURE, (self._key,), args))

    def record_success(self) -> None:
        super().record_success()
        if self._shared_failures > 0:
            self._shared_failures = 0
            self._report(lambda: self._link.client.hset(self._key, "failures", 0))

    def _report(self, call: Callable[[], Awaitable[object]]) -> None:
        if len(self._pending) >= _MAX_PENDING or not self._link.up:
            self._tm.fallbacks.labels(self._link.judge, "circuit", self._link.down_reason if not self._link.up
                                      else "overflow").inc()
            return
        task = asyncio.get_running_loop().create_task(self._send(call))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _send(self, call: Callable[[], Awaitable[object]]) -> None:
        try:
            reply = await self._link.run("circuit", call)
        except CoordinationDown as down:
            self._tm.fallbacks.labels(self._link.judge, "circuit", down.reason).inc()
            return
        if isinstance(reply, list):
            self._seen(reply[0], reply[1])

    def _seen(self, failures: object, open_until: object) -> None:
        def number(value: object) -> float:
            return float(value.decode() if isinstance(value, bytes) else str(value or 0))
        self._shared_failures = int(number(failures))
        self._shared_open_until = number(open_until)

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(self._refresh_every)
            if not self._link.up:
                continue
            try:
                values = await self._link.run("circuit_read", lambda: self._link.client.hmget(
                    self._key, "failures", "open_until"))
            except CoordinationDown:
                continue
            self._seen(values[0], values[1])

    async def aclose(self) -> None:
        tasks = [t for t in (self._refresher, *self._pending) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
