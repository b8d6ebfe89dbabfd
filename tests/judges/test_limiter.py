"""The judge limiter against a local OpenAI/Anthropic server through the real SDKs: deadlines, retries,
Retry-After, the daily budget, the circuit breaker, and the outcome counters."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.judge import Judge, sent_text
from evald.judges.limiter import JudgeError, JudgeSkipped
from evald.judges.prompting import VerdictField, build_prompt
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config, make_judge

pytestmark = pytest.mark.integration
SCORE = (VerdictField("score", 1, 5, "quality"),)
DATA = [("output", "Paris is the capital of France.")]


def count(telemetry: JudgeTelemetry, outcome: str, judge: str = "default") -> float:
    return float(telemetry.requests.labels(judge, outcome)._value.get())


@pytest.fixture
def telemetry() -> JudgeTelemetry:
    return JudgeTelemetry(CollectorRegistry())


async def ask(judge: Judge) -> int:
    verdict = await judge.evaluate("Judge the output.", DATA, SCORE)
    return verdict.values["score"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_verdict_is_parsed_and_its_usage_billed(provider: str, telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(text='{"reasoning": "accurate", "score": 4}', input_tokens=100, output_tokens=10)
        judge = make_judge(judge_config(llm, provider), telemetry)
        verdict = await judge.evaluate("Judge the output.", DATA, SCORE)
        await judge.aclose()
    assert verdict.values == {"score": 4} and verdict.reasoning == "accurate"
    assert llm.server is not None and len(llm.server.requests) == 1
    path = llm.server.requests[0].path
    assert path == ("/v1/chat/completions" if provider == "openai" else "/v1/messages")
    # gpt-4o-mini: (100 x 0.15 + 10 x 0.60) / 1e6 = 21e-6 USD; claude-haiku-4-5: (100 x 1 + 10 x 5) / 1e6 = 150e-6
    expected_cost = 21e-6 if provider == "openai" else 150e-6
    assert telemetry.cost.labels("default")._value.get() == pytest.approx(expected_cost)
    assert telemetry.tokens.labels("default", "input")._value.get() == 100
    assert count(telemetry, "ok") == 1
    if provider == "openai":
        assert llm.received[0]["response_format"]["type"] == "json_schema"  # tests/judges/test_providers.py


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_hanging_server_is_cut_at_the_timeout_and_retried_then_given_up(
    provider: str, telemetry: JudgeTelemetry
) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(hang=True)
        judge = make_judge(judge_config(llm, provider, timeout=0.3, max_retries=1), telemetry)
        started = time.monotonic()
        with pytest.raises(JudgeError) as caught:
            await ask(judge)
        elapsed = time.monotonic() - started
        await judge.aclose()
        received = len(llm.server.requests) if llm.server else 0
    assert caught.value.outcome == "timeout"
    # the server never answers: finishing at all proves the cut; two attempts of 0.3 s plus a 10 ms backoff take
    # ~0.6 s, and the bound leaves room for a loaded CI host (a full-suite run beside other work took > 1.1 s)
    assert elapsed < 3.0
    assert received == 2 and count(telemetry, "timeout") == 2


async def test_429_waits_for_retry_after_then_succeeds(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.then(Reply(status=429, retry_after="0.3"))
        judge = make_judge(judge_config(llm), telemetry)
        started = time.monotonic()
        assert await ask(judge) == 5
        elapsed = time.monotonic() - started
        await judge.aclose()
    assert elapsed >= 0.3  # the server's Retry-After, not the 10 ms backoff
    assert count(telemetry, "rate_limited") == 1 and count(telemetry, "ok") == 1


async def test_server_errors_are_retried_max_retries_times_then_stop(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(status=500)
        judge = make_judge(judge_config(llm, max_retries=2, circuit_breaker={"failures": 10}), telemetry)
        with pytest.raises(JudgeError) as caught:
            await ask(judge)
        await judge.aclose()
        assert llm.server is not None and len(llm.server.requests) == 3  # 1 + 2 retries
    assert caught.value.outcome == "server_error" and "3 attempt(s)" in str(caught.value)
    assert count(telemetry, "server_error") == 3


async def test_a_retry_after_beyond_max_retry_after_ends_the_call(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(status=429, retry_after="120")
        judge = make_judge(judge_config(llm, max_retry_after=5), telemetry)
        with pytest.raises(JudgeError) as caught:
            await ask(judge)
        await judge.aclose()
        assert llm.server is not None and len(llm.server.requests) == 1
    assert caught.value.outcome == "rate_limited"


async def test_client_errors_are_not_retried_and_the_key_never_appears(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(status=401)
        judge = make_judge(judge_config(llm), telemetry)
        with pytest.raises(JudgeError) as caught:
            await ask(judge)
        await judge.aclose()
        assert llm.server is not None and len(llm.server.requests) == 1
    assert caught.value.outcome == "client_error"
    assert "sk-test-not-a-real-key" not in str(caught.value)
    assert "sk-test-not-a-real-key" not in repr(judge.config)


def _reservation(judge: Judge) -> float:
    """The worst-case cost the limiter reserves for one call of ``ask`` (the prompt's length is fixed)."""
    return judge.limiter.worst_case_cost(sent_text(build_prompt("Judge the output.", DATA, SCORE), SCORE))


async def test_the_daily_budget_holds_exactly_and_the_refused_call_is_not_sent(telemetry: JudgeTelemetry) -> None:
    price = {"input": 1000.0, "output": 1000.0}  # 0.001 USD per token: 100 + 10 tokens bill 0.11 USD a call
    async with fake_llm() as llm:
        probe = make_judge(judge_config(llm, price=price, max_output_tokens=16, daily_budget_usd=1), telemetry, "p")
        reservation = _reservation(probe)
        # spent 0.22 + one reservation fits exactly, so calls 1-3 are sent; after the third, spent 0.33 + the
        # reservation is over the budget: the fourth call is refused without being sent.
        budget = 0.22 + reservation
        judge = make_judge(
            judge_config(llm, price=price, max_output_tokens=16, daily_budget_usd=budget), telemetry
        )
        for _ in range(3):
            assert await ask(judge) == 5
        with pytest.raises(JudgeSkipped) as caught:
            await ask(judge)
        await judge.aclose()
        await probe.aclose()
        assert llm.server is not None and len(llm.server.requests) == 3
    assert caught.value.outcome == caught.value.reason == "budget_exhausted"
    assert "daily budget" in str(caught.value)
    assert judge.limiter.budget is not None
    day = judge.limiter.budget.windows[0]
    assert day.spent == pytest.approx(0.33) and day.spent <= budget
    [remaining] = [sample.value for metric in telemetry.budget_remaining.collect() for sample in metric.samples
                   if sample.labels == {"judge": "default", "window": "day"}]
    assert remaining == pytest.approx(budget - 0.33)
    assert count(telemetry, "budget_exhausted") == 1 and count(telemetry, "ok") == 3


async def test_calls_in_flight_reserve_the_budget_so_concurrency_cannot_overspend(
    telemetry: JudgeTelemetry,
) -> None:
    price = {"input": 1000.0, "output": 1000.0}
    async with fake_llm() as llm:
        llm.default = Reply(delay=0.2)
        probe = make_judge(judge_config(llm, price=price, max_output_tokens=16, daily_budget_usd=1), telemetry, "p")
        budget = 2 * _reservation(probe)  # room for exactly two worst-case calls at once
        judge = make_judge(judge_config(llm, price=price, max_output_tokens=16, daily_budget_usd=budget), telemetry)
        results = await asyncio.gather(*(ask(judge) for _ in range(5)), return_exceptions=True)
        await judge.aclose()
        await probe.aclose()
        assert llm.server is not None and len(llm.server.requests) == 2
    refused = [r for r in results if isinstance(r, JudgeSkipped)]
    assert len(refused) == 3 and all(r.outcome == "budget_exhausted" for r in refused)


async def test_the_circuit_opens_fails_fast_and_closes_after_a_good_trial(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.then(Reply(status=503), Reply(status=503))
        config = judge_config(llm, max_retries=0, circuit_breaker={"failures": 2, "reset_after": 0.3})
        judge = make_judge(config, telemetry)
        for _ in range(2):
            with pytest.raises(JudgeError):
                await ask(judge)
        started = time.monotonic()
        with pytest.raises(JudgeSkipped) as caught:
            await ask(judge)
        assert time.monotonic() - started < 0.05  # failed fast: no request, no wait
        assert caught.value.outcome == "circuit_open"
        assert llm.server is not None and len(llm.server.requests) == 2
        assert telemetry.circuit_state.labels("default")._value.get() == 1
        await asyncio.sleep(0.35)
        assert await ask(judge) == 5  # the trial call after reset_after succeeds
        await judge.aclose()
    assert telemetry.circuit_state.labels("default")._value.get() == 0
    assert count(telemetry, "circuit_open") == 1 and count(telemetry, "server_error") == 2


async def test_a_malformed_verdict_is_an_error_never_a_score(
    telemetry: JudgeTelemetry, caplog: pytest.LogCaptureFixture
) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(text="The score is 1.0 " + "x" * 500)
        judge = make_judge(judge_config(llm), telemetry)
        with caplog.at_level(logging.WARNING), pytest.raises(JudgeError) as caught:
            await ask(judge)
        await judge.aclose()
        assert llm.server is not None and len(llm.server.requests) == 1  # not retried: it was billed
    assert caught.value.outcome == "malformed" and count(telemetry, "malformed") == 1
    logged = [r.getMessage() for r in caplog.records if "malformed verdict" in r.getMessage()]
    assert logged and "x" * 300 not in logged[0]  # the raw text is truncated in the log


async def test_a_body_that_is_not_json_is_counted_not_scored(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(broken_body=True)
        judge = make_judge(judge_config(llm), telemetry)
        with pytest.raises(JudgeError) as caught:
            await ask(judge)
        await judge.aclose()
    assert caught.value.outcome == "malformed"


async def test_outcomes_are_exposed_as_evald_judge_requests_total() -> None:
    registry = CollectorRegistry()
    telemetry = JudgeTelemetry(registry)
    async with fake_llm() as llm:
        llm.then(Reply(status=503))
        judge = make_judge(judge_config(llm), telemetry, "j")
        assert await ask(judge) == 5
        await judge.aclose()
    sample = registry.get_sample_value
    assert sample("evald_judge_requests_total", {"judge": "j", "outcome": "server_error"}) == 1
    assert sample("evald_judge_requests_total", {"judge": "j", "outcome": "ok"}) == 1
    assert sample("evald_judge_request_duration_seconds_count", {"judge": "j"}) == 2
    assert sample("evald_judge_tokens_total", {"judge": "j", "direction": "output"}) == 10


async def test_max_concurrency_bounds_the_calls_in_flight(telemetry: JudgeTelemetry) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(delay=0.1)
        judge = make_judge(judge_config(llm, max_concurrency=2), telemetry)
        assert await asyncio.gather(*(ask(judge) for _ in range(6))) == [5] * 6
        await judge.aclose()
    assert llm.peak_in_flight == 2


def test_fake_llm_scripts_replies_in_order() -> None:
    llm = FakeLLM().then(Reply(status=429), Reply(status=500))
    assert [r.status for r in llm.script] == [429, 500]
