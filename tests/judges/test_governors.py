"""The limiter's parts on a driven clock: token bucket, circuit breaker, budget windows (hour/day, USD/tokens)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry

from evald.exporters.sending_policy import TokenBucket
from evald.judges.config import JudgeConfig
from evald.judges.governors import Budget, BudgetExhausted, CircuitBreaker, WindowBudget
from evald.judges.limiter import JudgeLimiter
from evald.judges.providers import Completion
from evald.judges.telemetry import CIRCUIT_CLOSED, CIRCUIT_HALF_OPEN, CIRCUIT_OPEN, JudgeTelemetry
from evald.judges.usage import worst_case_tokens


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
    day = WindowBudget("usd", "day", 1.0, clock)
    budget = Budget([day])
    first = budget.reserve(0.6, 0)
    with pytest.raises(BudgetExhausted, match="daily budget \\$1"):
        budget.reserve(0.5, 0)  # 0.6 reserved + 0.5 > 1.0: refused while the first is in flight
    budget.settle(first, 0.25, 0)  # billed less than the worst case
    assert day.spent == 0.25 and day.reserved == 0.0 and day.remaining == 0.75
    budget.settle(budget.reserve(0.75, 0), 0.75, 0)  # 0.25 + 0.75 = 1.0: exactly the limit is allowed
    with pytest.raises(BudgetExhausted):
        budget.reserve(0.01, 0)
    clock.now += 120  # 00:01 the next UTC day
    assert day.remaining == 1.0 and budget.reserve(0.01, 0).periods == (day.period(),)


def test_an_hourly_window_rolls_at_the_utc_hour_while_the_daily_one_keeps_counting() -> None:
    clock = Clock(datetime(2026, 11, 23, 10, 0, tzinfo=UTC).timestamp())
    hour, day = WindowBudget("tokens", "hour", 1000, clock), WindowBudget("tokens", "day", 2500, clock)
    budget = Budget([hour, day])
    for _ in range(2):
        budget.settle(budget.reserve(0.0, 500), 0.0, 500)
    with pytest.raises(BudgetExhausted, match="hourly budget 1000 tokens") as caught:
        budget.reserve(0.0, 1)
    assert caught.value.window is hour and day.remaining == 1500
    clock.now += 3600  # 11:00: a new hour, the same day
    assert hour.remaining == 1000 and day.remaining == 1500
    for _ in range(2):
        budget.settle(budget.reserve(0.0, 500), 0.0, 500)
    clock.now += 3600  # 12:00: the hour is free again, the day has 500 left
    budget.settle(budget.reserve(0.0, 500), 0.0, 400)  # reserving exactly what is left is allowed
    with pytest.raises(BudgetExhausted, match="daily budget 2500 tokens"):
        budget.reserve(0.0, 200)  # 2400 + 200 > 2500, although the hour has 600 left
    assert day.spent == 2400 and hour.spent == 400 and hour.remaining == 600


def test_a_call_admitted_in_one_window_is_billed_to_it_not_to_the_next() -> None:
    clock = Clock(datetime(2026, 11, 23, 10, 59, 59, tzinfo=UTC).timestamp())
    hour = WindowBudget("usd", "hour", 1.0, clock)
    budget = Budget([hour])
    late = budget.reserve(0.9, 0)
    clock.now += 2  # 11:00:01: the call admitted at 10:59:59 returns in the next hour
    assert hour.reserved == 0.0 and hour.remaining == 1.0
    budget.settle(late, 0.9, 0)
    assert hour.spent == 0.0 and hour.remaining == 1.0  # hour 10's spend does not eat hour 11's budget


async def test_the_token_bucket_waits_for_refill() -> None:
    bucket = TokenBucket(rate_per_minute=600, burst=600)  # 10 per second, burst 600 (a judge's bucket)
    for _ in range(600):
        await bucket.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    await bucket.acquire(2)  # 2 tokens at 10/s: about 0.2 s
    assert loop.time() - started == pytest.approx(0.2, abs=0.1)


async def test_the_limiter_rate_limits_requests_and_tokens_with_a_minute_of_burst() -> None:
    completion = Completion("ok", 1, 1)

    async def send() -> Completion:
        return completion

    def limiter(**limits: float) -> JudgeLimiter:
        config = JudgeConfig(provider="openai", model="gpt-4o-mini", max_output_tokens=16, **limits)
        return JudgeLimiter("default", config, JudgeTelemetry(CollectorRegistry()))

    loop = asyncio.get_running_loop()
    requests = limiter(requests_per_minute=120)  # burst 120, then 2 per second
    started = loop.time()
    for _ in range(120):
        await requests.call("p", send, str)
    assert loop.time() - started < 0.3
    await requests.call("p", send, str)
    assert loop.time() - started == pytest.approx(0.5, abs=0.15)

    per_call = worst_case_tokens("p") + 16
    tokens = limiter(tokens_per_minute=2 * per_call)  # two calls' estimates, then a long wait
    await tokens.call("p", send, str)
    await tokens.call("p", send, str)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(tokens.call("p", send, str), 0.3)
