"""A judge's hard budgets (USD and tokens per UTC hour and day) shared by every replica through Redis.

As in process (evald/judges/governors.py), each attempt reserves its worst case in every configured window before
it is sent, all-or-nothing, and settles with its charge after it; here both steps are Lua scripts, so the check
and the reservation are one atomic step for every replica together. Per window and period one hash
``<prefix>:judge:<name>:budget:<unit>:<window>:<period>`` holds ``spent``, ``reserved`` and each reservation's
amount (``r:<id>``); a sorted set beside it holds each reservation's expiry (its call's deadline + 60 s), so the
reservations of a replica that died mid-call are released by the next reservation after they expired instead of
holding the window for good. A call is billed to the window it was admitted in (the period is in the key); keys
expire an hour after their window ends.

Fallback (Redis unreachable or slower than ``redis.timeout``): the call is governed by an in-process budget with
every limit divided by ``expected_replicas`` (kept for the whole window across outages), counted
``evald_judge_coordination_fallbacks_total{component="budget"}``; never unlimited. What a replica was charged while
Redis could not be used (in fallback, or a settlement that failed) is added to the shared windows when Redis is
back. Bound: in a window during which Redis was unreachable, every replica together is charged at most the limit
plus each replica's share (limit x replicas / ``expected_replicas``; 2 x the limit when the replicas are as
expected), and once Redis is back no call is admitted until the window is below its limit.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from evald.judges.config import JudgeConfig
from evald.judges.coordination.link import CoordinationDown, RedisLink
from evald.judges.coordination.telemetry import CoordinationTelemetry
from evald.judges.governors import WINDOW_SECONDS, Budget, BudgetExhausted, Reservation, WindowBudget, budget_limits

_RESERVE = """
local now, expiry, rid = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local n = #KEYS / 2
local spent, reserved = {}, {}
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, 64)) do
    local a = redis.call('HGET', h, 'r:' .. id)
    if a then
      redis.call('HINCRBYFLOAT', h, 'reserved', -tonumber(a))
      redis.call('HDEL', h, 'r:' .. id)
    end
    redis.call('ZREM', z, id)
  end
  spent[i] = tonumber(redis.call('HGET', h, 'spent') or '0')
  reserved[i] = math.max(0, tonumber(redis.call('HGET', h, 'reserved') or '0'))
end
local reply = {'0'}
for i = 1, n do reply[i + 1] = tostring(spent[i]) end
for i = 1, n do
  local limit, amount = tonumber(ARGV[1 + 3 * i]), tonumber(ARGV[2 + 3 * i])
  if spent[i] + reserved[i] + amount > limit * (1 + 1e-12) then
    reply[1] = tostring(i)
    return reply
  end
end
for i = 1, n do
  local h, z, ttl = KEYS[2 * i - 1], KEYS[2 * i], ARGV[3 + 3 * i]
  redis.call('HINCRBYFLOAT', h, 'reserved', ARGV[2 + 3 * i])
  redis.call('HSET', h, 'r:' .. rid, ARGV[2 + 3 * i])
  redis.call('ZADD', z, expiry, rid)
  redis.call('EXPIRE', h, ttl)
  redis.call('EXPIRE', z, ttl)
end
return reply
"""

_SETTLE = """
local rid = ARGV[1]
local reply = {}
for i = 1, #KEYS / 2 do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local a = redis.call('HGET', h, 'r:' .. rid)
  if a then
    redis.call('HINCRBYFLOAT', h, 'reserved', -tonumber(a))
    redis.call('HDEL', h, 'r:' .. rid)
    redis.call('ZREM', z, rid)
  end
  local billed = tonumber(ARGV[2 * i])
  if billed > 0 then redis.call('HINCRBYFLOAT', h, 'spent', ARGV[2 * i]) end
  redis.call('EXPIRE', h, ARGV[2 * i + 1])
  reply[i] = redis.call('HGET', h, 'spent') or '0'
end
return reply
"""
_GRACE = 60.0
_KEY_TTL_EXTRA = 3600


class _ShareWindow(WindowBudget):
    """One window's in-process share while Redis is unreachable."""

    def describe(self) -> str:
        return f"{super().describe()} (this replica's share while Redis is unreachable)"


class SharedWindow:
    """What the judge's budget gauges read: the limit minus what every replica was charged, as last seen."""

    def __init__(self, unit: str, window: str, limit: float, clock: Callable[[], float]) -> None:
        self.unit, self.window, self.limit = unit, window, limit
        self.seconds = WINDOW_SECONDS[window]
        self.spec = WindowBudget(unit, window, limit, clock)  # for the refusal's wording
        self._clock = clock
        self._seen_period, self._seen_spent = -1, 0.0

    def period(self) -> int:
        return int(self._clock() // self.seconds)

    def seen(self, period: int, spent: float) -> None:
        if period >= self._seen_period:
            self._seen_period, self._seen_spent = period, spent

    def left(self) -> float:
        spent = self._seen_spent if self._seen_period == self.period() else 0.0
        return max(0.0, self.limit - spent)


@dataclass(frozen=True, slots=True)
class SharedReservation:
    usd: float
    tokens: float
    periods: tuple[int, ...]
    rid: str | None = None  # None: reserved in process (fallback)
    local: Reservation | None = None


class SharedBudget:
    def __init__(self, link: RedisLink, config: JudgeConfig, telemetry: CoordinationTelemetry,
                 wall_clock: Callable[[], float]) -> None:
        self._link = link
        self._tm = telemetry
        self._clock = wall_clock
        self._expiry = config.call_deadline() + _GRACE
        share = config.coordination.expected_replicas if config.coordination else 1
        self.windows = [SharedWindow(unit, window, limit, wall_clock) for unit, window, limit in budget_limits(config)]
        self._local = Budget([_ShareWindow(w.unit, w.window, w.limit / share, wall_clock) for w in self.windows])
        self._unsynced: dict[tuple[int, int], float] = defaultdict(float)  # (window index, period) -> charged
        self._settling: set[asyncio.Task[None]] = set()
        link.on_recovery.append(self._reconcile)
        for w in self.windows:
            telemetry.budget_remaining.labels(link.judge, w.unit, w.window).set_function(w.left)

    def _keys(self, periods: tuple[int, ...]) -> list[str]:
        keys: list[str] = []
        for w, period in zip(self.windows, periods, strict=True):
            key = self._link.key("budget", w.unit, w.window, period)
            keys += [key, f"{key}:res"]
        return keys

    def _ttl(self, w: SharedWindow) -> int:
        return w.seconds + _KEY_TTL_EXTRA

    async def areserve(self, usd: float, tokens: float) -> SharedReservation:
        """Reserve ``usd``/``tokens`` in every window (raises ``BudgetExhausted``); in process while Redis is
        down."""
        now = self._clock()
        periods = tuple(int(now // w.seconds) for w in self.windows)
        rid = uuid.uuid4().hex[:16]
        args: list[str | float | int] = [now, now + self._expiry, rid]
        for w in self.windows:
            args += [repr(w.limit), repr(usd if w.unit == "usd" else float(tokens)), self._ttl(w)]
        keys = self._keys(periods)
        try:
            reply = await self._link.run("budget_reserve", lambda: self._link.script(_RESERVE, keys, args))
        except CoordinationDown as down:
            return self._reserve_locally(usd, tokens, periods, down.reason)
        status, *spent = (item.decode() if isinstance(item, bytes) else str(item) for item in reply)
        for w, period, value in zip(self.windows, periods, spent, strict=False):
            w.seen(period, float(value))
        if status != "0":
            self._tm.reservations.labels(self._link.judge, "refused").inc()
            raise BudgetExhausted(self.windows[int(status) - 1].spec)
        self._tm.reservations.labels(self._link.judge, "admitted").inc()
        return SharedReservation(usd, tokens, periods, rid=rid)

    def _reserve_locally(self, usd: float, tokens: float, periods: tuple[int, ...], reason: str
                         ) -> SharedReservation:
        self._tm.fallbacks.labels(self._link.judge, "budget", reason).inc()
        try:
            local = self._local.reserve(usd, tokens)
        except BudgetExhausted:
            self._tm.reservations.labels(self._link.judge, "fallback_refused").inc()
            raise
        self._tm.reservations.labels(self._link.judge, "fallback_admitted").inc()
        return SharedReservation(usd, tokens, periods, local=local)

    def settle(self, reservation: SharedReservation, usd: float, tokens: float) -> None:
        """Replace the reservation with the charge; the Redis part runs in a task (the reservation is held until
        then, which is the safe side)."""
        if reservation.local is not None:
            self._local.settle(reservation.local, usd, tokens)
            self._remember(reservation.periods, usd, tokens)
            return
        task = asyncio.get_running_loop().create_task(self._settle_shared(reservation, usd, tokens))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    def _remember(self, periods: tuple[int, ...], usd: float, tokens: float) -> None:
        for index, (w, period) in enumerate(zip(self.windows, periods, strict=True)):
            amount = usd if w.unit == "usd" else tokens
            if amount > 0:
                self._unsynced[(index, period)] += amount

    async def _settle_shared(self, reservation: SharedReservation, usd: float, tokens: float) -> None:
        assert reservation.rid is not None
        args: list[str | int] = [reservation.rid]
        for w in self.windows:
            args += [repr(usd if w.unit == "usd" else float(tokens)), self._ttl(w)]
        keys = self._keys(reservation.periods)
        try:
            reply = await self._link.run("budget_settle", lambda: self._link.script(_SETTLE, keys, args))
        except CoordinationDown as down:
            # the reservation expires by itself; the charge is added when Redis is back
            self._tm.fallbacks.labels(self._link.judge, "budget", down.reason).inc()
            self._remember(reservation.periods, usd, tokens)
            return
        for w, period, value in zip(self.windows, reservation.periods, reply, strict=True):
            w.seen(period, float(value.decode() if isinstance(value, bytes) else value))

    async def _reconcile(self) -> None:
        """Add what was charged while Redis could not be used to the shared windows (on recovery)."""
        if not self._unsynced:
            return
        pending, self._unsynced = dict(self._unsynced), defaultdict(float)
        client = self._link.client

        async def push() -> None:
            pipe = client.pipeline(transaction=False)
            for (index, period), amount in pending.items():
                w = self.windows[index]
                key = self._link.key("budget", w.unit, w.window, period)
                pipe.hincrbyfloat(key, "spent", amount)
                pipe.expire(key, self._ttl(w))
            await pipe.execute()

        try:
            await self._link.run("budget_reconcile", push)
        except CoordinationDown:
            for slot, amount in pending.items():
                self._unsynced[slot] += amount
            raise

    async def aclose(self) -> None:
        if self._settling:
            await asyncio.wait(set(self._settling), timeout=self._link.config.redis.timeout * 2)
