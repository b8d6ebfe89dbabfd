"""Usage a provider reports, through the real openai and anthropic SDKs and the stand-in: missing, negative,
non-numeric, NaN/infinite or absurd usage is counted by reason and charged the worst case while the verdict still
counts; unreadable answers are charged what they reported, else the worst case, never 0; and negative usage
cannot open the budget (20 concurrent calls against a limit of 3)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.judge import Judge, sent_text
from evald.judges.limiter import JudgeError, JudgeSkipped
from evald.judges.prompting import VerdictField, build_prompt
from evald.judges.telemetry import JudgeTelemetry
from evald.judges.usage import (
    ABSURD_FACTOR,
    ANTHROPIC_TOOL_PROMPT_TOKENS,
    MISSING,
    Charge,
    charge_for,
    worst_case_tokens,
)
from tests.judges.fake_llm import OMIT, FakeLLM, Reply, fake_llm, judge_config, make_judge

SCORE = (VerdictField("score", 1, 5, "quality"),)
DATA = [("output", "Paris is the capital of France.")]
TASK = "Judge the output."
MAX_OUTPUT = 64
#: the worst case of one call on the openai judge (the nonce has a fixed length)
WORST_INPUT = worst_case_tokens(sent_text(build_prompt(TASK, DATA, SCORE), SCORE))
WORST = WORST_INPUT + MAX_OUTPUT


def worst(provider: str) -> int:
    """One call's worst case on ``provider``'s judge: Anthropic's tool-use prompt is billed as input too."""
    return WORST + (ANTHROPIC_TOOL_PROMPT_TOKENS if provider == "anthropic" else 0)


@pytest.mark.parametrize(
    ("reported", "reason"),
    [((MISSING, 10), "missing"), ((100, None), "missing"), (("100", 10), "non_numeric"), ((True, 10), "non_numeric"),
     (([100], 10), "non_numeric"), ((math.nan, 10), "non_finite"), ((100, math.inf), "non_finite"),
     ((-5, 10), "negative"), ((100, -1.0), "negative"), ((1000 * ABSURD_FACTOR + 1, 10), "absurd"),
     ((100, 64 * ABSURD_FACTOR + 1), "absurd")],
)
def test_unusable_usage_is_charged_the_worst_case_with_its_reason(reported: tuple[object, object], reason: str) -> None:
    assert charge_for(*reported, 1000, 64) == Charge(1000, 64, reason)


def test_readable_usage_is_charged_as_reported_and_above_the_worst_case_is_flagged() -> None:
    assert charge_for(100, 10, 1000, 64) == Charge(100, 10)
    assert charge_for(0, 0, 1000, 64) == Charge(0, 0)
    assert charge_for(99.2, 10.0, 1000, 64) == Charge(100, 10)  # a fraction is rounded up
    assert charge_for(1500, 10, 1000, 64) == Charge(1500, 10, "above_worst_case")
    assert charge_for(1000 * ABSURD_FACTOR, 10, 1000, 64) == Charge(10_000, 10, "above_worst_case")


def judge_on(llm: FakeLLM, provider: str, registry: CollectorRegistry, **overrides: Any) -> Judge:
    return make_judge(judge_config(llm, provider, max_output_tokens=MAX_OUTPUT, **overrides), JudgeTelemetry(registry))


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, {"judge": "default", **labels}) or 0.0


def charged(registry: CollectorRegistry) -> float:
    return sum(sample(registry, "evald_judge_tokens_total", direction=d) for d in ("input", "output"))


@pytest.mark.integration
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("usage", "reason"),
    [(None, "missing"), ((OMIT, 10), "missing"), ((-46_000, -20), "negative"), (("100", 10), "non_numeric"),
     ((math.nan, 10), "non_finite"), ((100, math.inf), "non_finite"), ((10**15, 10), "absurd")],
)
async def test_a_valid_verdict_with_bad_usage_counts_and_is_charged_the_worst_case(
    provider: str, usage: Any, reason: str
) -> None:
    registry = CollectorRegistry()
    async with fake_llm() as llm:
        llm.default = Reply(usage=usage)
        judge = judge_on(llm, provider, registry, budget={"max_tokens": {"hour": 100_000}})
        verdict = await judge.evaluate(TASK, DATA, SCORE)
        await judge.aclose()
    assert verdict.values["score"] == 5
    assert sample(registry, "evald_judge_requests_total", outcome="ok") == 1
    assert sample(registry, "evald_judge_usage_invalid_total", reason=reason) == 1
    assert charged(registry) == worst(provider)
    window = judge.limiter.budget.windows[0] if judge.limiter.budget else None
    assert window is not None and window.spent == worst(provider) and window.reserved == 0


@pytest.mark.integration
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("reply", "charge", "invalid"),
    [(Reply(text="score: 5, trust me"), 110, None),  # a verdict that does not parse: its usage is charged
     (Reply(broken_body=True), None, "missing"),  # a body that is not JSON: the worst case (None), never 0
     (Reply(raw_body='{"usage": {"prompt_tokens": 70, "completion_tokens": 7, "input_tokens": 70, '
                     '"output_tokens": 7}}'), 77, None),  # usage but no content
     (Reply(raw_body='["not", "an", "answer"]'), None, "missing")],
)
async def test_an_unreadable_answer_is_charged_its_reported_usage_else_the_worst_case(
    provider: str, reply: Reply, charge: int | None, invalid: str | None
) -> None:
    registry = CollectorRegistry()
    async with fake_llm() as llm:
        llm.default = reply
        judge = judge_on(llm, provider, registry)
        with pytest.raises(JudgeError, match="malformed"):
            await judge.evaluate(TASK, DATA, SCORE)
        await judge.aclose()
    assert sample(registry, "evald_judge_requests_total", outcome="malformed") == 1
    assert charged(registry) == (worst(provider) if charge is None else charge)
    if invalid is not None:
        assert sample(registry, "evald_judge_usage_invalid_total", reason=invalid) == 1


@pytest.mark.integration
async def test_overbilling_above_the_worst_case_is_charged_as_reported_and_flagged() -> None:
    registry = CollectorRegistry()
    async with fake_llm() as llm:
        llm.default = Reply(input_tokens=2 * WORST_INPUT, output_tokens=10)
        judge = judge_on(llm, "openai", registry)
        assert (await judge.evaluate(TASK, DATA, SCORE)).values["score"] == 5
        await judge.aclose()
    assert charged(registry) == 2 * WORST_INPUT + 10 == llm.billed_tokens
    assert sample(registry, "evald_judge_usage_invalid_total", reason="above_worst_case") == 1


@pytest.mark.integration
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_negative_usage_cannot_open_the_budget_under_concurrency(provider: str) -> None:
    registry = CollectorRegistry()
    async with fake_llm() as llm:
        llm.default = Reply(usage=(-46_000_000, -20), bill_worst=True, delay=0.05)
        limit = 3 * worst(provider)
        judge = judge_on(llm, provider, registry, max_concurrency=20, budget={"max_tokens": {"hour": limit}})
        results = await asyncio.gather(*(judge.evaluate(TASK, DATA, SCORE) for _ in range(20)),
                                       return_exceptions=True)
        with pytest.raises(JudgeSkipped, match="budget"):
            await judge.evaluate(TASK, DATA, SCORE)
        await judge.aclose()
    verdicts = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, JudgeSkipped) and r.reason == "budget_exhausted"]
    assert len(verdicts) == 3 and len(refused) == 17 and len(llm.received) == 3
    assert llm.billed_tokens <= 3 * worst(provider) == charged(registry)
    assert sample(registry, "evald_judge_usage_invalid_total", reason="negative") == 3
    assert sample(registry, "evald_judge_budget_remaining_tokens", window="hour") == 0
