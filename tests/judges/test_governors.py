"""The limiter's parts on a driven clock: token bucket, circuit breaker, daily budget."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from evald.judges.governors import CircuitBreaker, DailyBudget, TokenBucket
from evald.judges.telemetry import CIRCUIT_CLOSED, CIRCUIT_HALF_OPEN, CIRCUIT_OPEN


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_after_n_failures_lets_one_trial_through_and_reopens_on_its_failure() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failures=3, reset_after=10, clock=clock)
    for _ in range(2):
        breaker.record_failure()
    assert breaker.allow() and breaker.state == CIRCUIT_CLOSED
    breaker.record_failure()
    assert breaker.state == CIRCUIT_OPEN and not breaker.allow()
    clock.now = 10.0
    assert breaker.allow() and breaker.state == CIRCUIT_HALF_OPEN
    assert not breaker.allow()  # one trial at a time
    breaker.record_failure()
    assert breaker.state == CIRCUIT_OPEN and not breaker.allow()
    clock.now = 20.0
    assert breaker.allow()
    breaker.abandon_trial()  # the trial was cancelled: the next call may try
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == CIRCUIT_CLOSED and breaker.allow()


def test_a_success_resets_the_consecutive_failure_count() -> None:
    breaker = CircuitBreaker(failures=2, reset_after=10, clock=Clock())
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state == CIRCUIT_CLOSED


def test_the_budget_reserves_refuses_settles_and_resets_at_utc_midnight() -> None:
    clock = Clock(datetime(2026, 11, 23, 23, 59, tzinfo=UTC).timestamp())
    budget = DailyBudget(1.0, clock)
    assert budget.try_reserve(0.6)
    assert not budget.try_reserve(0.5)  # 0.6 reserved + 0.5 > 1.0: refused while the first is in flight
    budget.settle(0.6, 0.25)  # billed less than the worst case
    assert budget.spent == 0.25 and budget.reserved == 0.0 and budget.remaining == 0.75
    assert budget.try_reserve(0.75)  # 0.25 + 0.75 = 1.0: exactly the limit is allowed
    budget.settle(0.75, 0.75)
    assert not budget.try_reserve(0.01)
    clock.now += 120  # 00:01 the next UTC day
    assert budget.remaining == 1.0 and budget.try_reserve(0.01)


async def test_the_token_bucket_waits_for_refill() -> None:
    bucket = TokenBucket(rate_per_minute=600)  # 10 per second, burst 600
    for _ in range(600):
        await bucket.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    await bucket.acquire(2)  # 2 tokens at 10/s: about 0.2 s
    assert loop.time() - started == pytest.approx(0.2, abs=0.1)
