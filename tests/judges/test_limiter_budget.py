"""Hard budgets through the limiter, the real openai SDK and the fake server, on a driven UTC clock: USD and
tokens per hour and per day hold exactly, the refused call is not sent, windows roll over, gauges follow."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.judge import Judge, sent_text
from evald.judges.limiter import JudgeError, JudgeLimiter, JudgeSkipped
from evald.judges.prompting import VerdictField, build_prompt
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config

pytestmark = pytest.mark.integration
SCORE = (VerdictField("score", 1, 5, "quality"),)
DATA = [("output", "Paris is the capital of France.")]
TASK = "Judge the output."
PRICE = {"input": 1000.0, "output": 1000.0}  # 0.001 USD per token: the fake's 100 + 10 tokens bill 0.11 USD
BILLED_USD, BILLED_TOKENS = 0.11, 110


class WallClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 23, 10, 0, tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


def clocked_judge(llm: FakeLLM, telemetry: JudgeTelemetry, clock: WallClock, **overrides: Any) -> Judge:
    config = judge_config(llm, price=PRICE, max_output_tokens=16, **overrides)
    return Judge("default", config, telemetry, limiter=JudgeLimiter("default", config, telemetry, wall_clock=clock))


def worst_case(llm: FakeLLM) -> tuple[float, int]:
    """What one call of ``ask`` reserves: (USD, tokens); the prompt's length is fixed (fixed-size nonce)."""
    config = judge_config(llm, price=PRICE, max_output_tokens=16)
    limiter = JudgeLimiter("probe", config, JudgeTelemetry(CollectorRegistry()))
    prompt = sent_text(build_prompt(TASK, DATA, SCORE), SCORE)
    return limiter.worst_case_cost(prompt), limiter.worst_case(prompt).tokens


async def ask(judge: Judge) -> int:
    return (await judge.evaluate(TASK, DATA, SCORE)).values["score"]


def sent(llm: FakeLLM) -> int:
    return len(llm.server.requests) if llm.server else 0


async def test_the_hourly_usd_budget_holds_exactly_then_rolls_over_at_the_utc_hour() -> None:
    registry = CollectorRegistry()
    telemetry, clock = JudgeTelemetry(registry), WallClock()
    async with fake_llm() as llm:
        probe_usd, _ = worst_case(llm)
        hour = 2 * BILLED_USD + probe_usd  # two billed calls + one worst case fit exactly: three calls an hour
        judge = clocked_judge(llm, telemetry, clock, budget={"max_cost_usd": {"hour": hour, "day": 2.0}})
        for _ in range(3):
            assert await ask(judge) == 5
        with pytest.raises(JudgeSkipped) as caught:
            await ask(judge)
        assert sent(llm) == 3  # the refused call was not sent
        assert caught.value.reason == "budget_exhausted" and "hourly budget" in str(caught.value)
        gauge = registry.get_sample_value
        labels = {"judge": "default", "window": "hour"}
        assert gauge("evald_judge_budget_remaining_usd", labels) == pytest.approx(hour - 3 * BILLED_USD)
        clock.now += 3600  # 11:00 UTC: a new hour, the same day
        assert gauge("evald_judge_budget_remaining_usd", labels) == pytest.approx(hour)  # current at a scrape
        for _ in range(3):
            assert await ask(judge) == 5
        with pytest.raises(JudgeSkipped):
            await ask(judge)
        assert sent(llm) == 6
        day = {"judge": "default", "window": "day"}
        assert gauge("evald_judge_budget_remaining_usd", day) == pytest.approx(2.0 - 6 * BILLED_USD)
        await judge.aclose()
    assert registry.get_sample_value(
        "evald_judge_requests_total", {"judge": "default", "outcome": "budget_exhausted"}
    ) == 2


async def test_the_daily_window_refuses_what_the_hourly_window_would_allow() -> None:
    telemetry, clock = JudgeTelemetry(CollectorRegistry()), WallClock()
    async with fake_llm() as llm:
        probe_usd, _ = worst_case(llm)
        day = 4 * BILLED_USD + probe_usd  # five calls a day
        judge = clocked_judge(llm, telemetry, clock, daily_budget_usd=day, budget={"max_cost_usd": {"hour": 10}})
        for _ in range(5):
            assert await ask(judge) == 5
            clock.now += 3600
        with pytest.raises(JudgeSkipped, match="daily budget"):
            await ask(judge)
        assert sent(llm) == 5
        clock.now = datetime(2026, 11, 24, 0, 0, tzinfo=UTC).timestamp()  # the next UTC day
        assert await ask(judge) == 5
        await judge.aclose()


async def test_the_token_budget_reserves_worst_case_tokens_and_settles_billed_tokens() -> None:
    registry = CollectorRegistry()
    telemetry, clock = JudgeTelemetry(registry), WallClock()
    async with fake_llm() as llm:
        _, probe_tokens = worst_case(llm)
        hour = 2 * BILLED_TOKENS + probe_tokens
        judge = clocked_judge(llm, telemetry, clock, budget={"max_tokens": {"hour": hour, "day": 100_000}})
        for _ in range(3):
            assert await ask(judge) == 5
        with pytest.raises(JudgeSkipped, match=f"hourly budget {hour} tokens"):
            await ask(judge)
        assert sent(llm) == 3
        labels = {"judge": "default", "window": "hour"}
        assert registry.get_sample_value("evald_judge_budget_remaining_tokens", labels) == hour - 3 * BILLED_TOKENS
        labels["window"] = "day"
        assert registry.get_sample_value("evald_judge_budget_remaining_tokens", labels) == 100_000 - 330
        clock.now += 3600
        assert await ask(judge) == 5
        await judge.aclose()


async def test_a_refused_call_releases_nothing_it_did_not_hold_and_failed_calls_bill_nothing() -> None:
    telemetry, clock = JudgeTelemetry(CollectorRegistry()), WallClock()
    async with fake_llm() as llm:
        llm.default = Reply(status=400)
        judge = clocked_judge(llm, telemetry, clock, budget={"max_tokens": {"hour": 10_000}})
        for _ in range(3):
            with pytest.raises(JudgeError, match="client_error"):
                await ask(judge)
        await judge.aclose()
    assert judge.limiter.budget is not None
    window = judge.limiter.budget.windows[0]
    assert window.spent == 0 and window.reserved == 0  # reservations of failed calls are all released
