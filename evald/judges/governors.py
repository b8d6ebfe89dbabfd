"""The limiter's parts: a token bucket, a circuit breaker and a daily (UTC) USD budget with reservations.

Each takes a ``clock`` (seconds, monotonic for rates, wall time for the budget day) so tests can drive time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime

from evald.judges.telemetry import CIRCUIT_CLOSED, CIRCUIT_HALF_OPEN, CIRCUIT_OPEN

Clock = Callable[[], float]


class TokenBucket:
    """``rate_per_minute`` tokens per minute, bursting up to one minute's worth; waiters are served in order."""

    def __init__(self, rate_per_minute: float, clock: Clock = time.monotonic) -> None:
        self.capacity = rate_per_minute
        self._rate = rate_per_minute / 60.0
        self._tokens = rate_per_minute
        self._clock = clock
        self._updated = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self._rate)
        self._updated = now

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(amount, self.capacity)  # a call bigger than the bucket waits for a full bucket
        async with self._lock:
            self._refill()
            while self._tokens < amount:
                await asyncio.sleep((amount - self._tokens) / self._rate)
                self._refill()
            self._tokens -= amount


class CircuitBreaker:
    """Opens after ``failures`` consecutive failures; after ``reset_after`` seconds one trial call goes through:
    success closes it, failure opens it again. While open, ``allow()`` is False (the caller fails fast)."""

    def __init__(self, failures: int, reset_after: float, clock: Clock = time.monotonic) -> None:
        self._threshold = failures
        self._reset_after = reset_after
        self._clock = clock
        self._failures = 0
        self._opened_at = 0.0
        self._trial_in_flight = False
        self.state = CIRCUIT_CLOSED

    def allow(self) -> bool:
        if self.state == CIRCUIT_OPEN and self._clock() - self._opened_at >= self._reset_after:
            self.state = CIRCUIT_HALF_OPEN
            self._trial_in_flight = False
        if self.state == CIRCUIT_HALF_OPEN:
            if self._trial_in_flight:
                return False
            self._trial_in_flight = True
            return True
        return self.state == CIRCUIT_CLOSED

    def record_success(self) -> None:
        self._failures = 0
        self._trial_in_flight = False
        self.state = CIRCUIT_CLOSED

    def record_failure(self) -> None:
        self._failures += 1
        if self.state == CIRCUIT_HALF_OPEN or self._failures >= self._threshold:
            self.state = CIRCUIT_OPEN
            self._opened_at = self._clock()
            self._trial_in_flight = False

    def abandon_trial(self) -> None:
        """Free the half-open trial slot of a call that ended without a result (e.g. cancelled)."""
        self._trial_in_flight = False

    @property
    def is_open(self) -> bool:
        return self.state == CIRCUIT_OPEN


class DailyBudget:
    """USD per UTC day. A call first reserves its worst-case cost; it is refused when spent + reserved + that
    cost would pass the limit; afterwards the reservation is replaced by the billed cost."""

    def __init__(self, limit_usd: float, clock: Clock = time.time) -> None:
        self.limit = limit_usd
        self._clock = clock
        self._day = self._today()
        self.spent = 0.0
        self.reserved = 0.0

    def _today(self) -> str:
        return datetime.fromtimestamp(self._clock(), UTC).date().isoformat()

    def _roll(self) -> None:
        today = self._today()
        if today != self._day:
            self._day, self.spent = today, 0.0

    def try_reserve(self, amount: float) -> bool:
        self._roll()
        if self.spent + self.reserved + amount > self.limit + 1e-12:
            return False
        self.reserved += amount
        return True

    def settle(self, reserved: float, billed: float) -> None:
        self._roll()
        self.reserved = max(0.0, self.reserved - reserved)
        self.spent += billed

    @property
    def remaining(self) -> float:
        self._roll()
        return max(0.0, self.limit - self.spent)
