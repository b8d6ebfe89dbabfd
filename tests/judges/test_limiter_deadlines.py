"""Judge calls that their metric gives up on, through the scorer, a real judged metric, the real openai SDK and
the stand-in, which bills an answer when it is ready whether or not the client is still there (as a provider
does): an abandoned call keeps its worst-case reservation and its slot until it settles, is counted ``timeout``
and feeds the circuit breaker; what the stand-in billed never passes the hard token budget, with 20 concurrent
cases, and is exactly what evald charged.

The scorer here gets a ``metric_timeout`` shorter than the judge's deadline on purpose: a root config refuses that
(test_config), but a metric can still give up on a call (a metric that asks twice, a call that queued for a slot),
and that is the path under test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from evald.case import EvalCase
from evald.judges.judge import Judge, sent_text
from evald.judges.prompting import VerdictField, build_prompt
from evald.judges.registry import close_judges, register_judge
from evald.judges.telemetry import CIRCUIT_OPEN, judge_telemetry
from evald.judges.usage import ANTHROPIC_TOOL_PROMPT_TOKENS, worst_case_tokens
from evald.metrics.rag.answer_relevancy import AnswerRelevancyMetric
from evald.model import ScoredCase
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config

pytestmark = pytest.mark.integration
METRIC = AnswerRelevancyMetric()
MAX_OUTPUT = 64


def case(i: int) -> EvalCase:
    """Cases whose prompts have the same length (so the same worst case) and differ in content."""
    return EvalCase(trace_id=f"{i + 1:032x}", input=f"What is the capital of France? ({i:04d})", output="Paris.")


def worst_tokens(provider: str = "openai") -> int:
    """What one call reserves (Anthropic's tool-use prompt is billed as input too)."""
    data = METRIC.judge_data(case(0))
    assert data is not None
    fields = (VerdictField("score", 1, 5, METRIC.score_meaning),)
    tool_prompt = ANTHROPIC_TOOL_PROMPT_TOKENS if provider == "anthropic" else 0
    return worst_case_tokens(sent_text(build_prompt(METRIC.task, data, fields), fields)) + tool_prompt + MAX_OUTPUT


@dataclass
class Setup:
    llm: FakeLLM
    tm: Telemetry
    judge: Judge
    scorer: CaseScorer

    def count(self, name: str, **labels: str) -> float:
        return self.tm.registry.get_sample_value(name, {"judge": "default", **labels}) or 0.0

    def requests(self, outcome: str) -> float:
        return self.count("evald_judge_requests_total", outcome=outcome)

    @property
    def sent(self) -> int:
        return len(self.llm.server.requests) if self.llm.server else 0

    @property
    def tokens_charged(self) -> float:
        return sum(self.count("evald_judge_tokens_total", direction=d) for d in ("input", "output"))

    async def score(self, cases: range) -> list[ScoredCase]:
        binding = [MetricBinding(METRIC, "all", MetricFilter())]
        return await asyncio.gather(*(self.scorer.score(case(i), binding) for i in cases))

    async def settled(self) -> None:
        """Wait (bounded) until every call the metrics abandoned has settled."""
        if self.judge.limiter.running:
            await asyncio.wait(self.judge.limiter.running, timeout=5)
        assert not self.judge.limiter.running


@asynccontextmanager
async def judged(metric_timeout: float, provider: str = "openai", **overrides: Any) -> AsyncIterator[Setup]:
    async with fake_llm() as llm:
        tm = Telemetry()
        config = judge_config(llm, provider, max_output_tokens=MAX_OUTPUT, **{"max_retries": 0, **overrides})
        judge = Judge("default", config, judge_telemetry(tm.registry))
        register_judge(judge)
        try:
            yield Setup(llm, tm, judge, CaseScorer(tm, metric_timeout=metric_timeout))
        finally:
            await close_judges()


def outcomes(scored: list[ScoredCase]) -> list[str]:
    return sorted(
        "score" if c.scores else f"skip:{c.skipped[0][1]}" if c.skipped else f"error:{c.errors[0][1][:9]}"
        for c in scored
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_with_every_call_hanging_the_circuit_opens_and_every_call_is_counted(provider: str) -> None:
    async with judged(0.2, provider, timeout=1.0, max_concurrency=8,  # 1 s: still in flight after the wave
                      circuit_breaker={"failures": 3, "reset_after": 60},
                      budget={"max_tokens": {"hour": 1_000_000}}) as s:
        s.llm.default = Reply(hang=True)
        first = await s.score(range(20))
        assert outcomes(first) == ["error:timed out"] * 20
        window = s.judge.limiter.budget.windows[0] if s.judge.limiter.budget else None
        assert window is not None
        # the 8 calls in flight still hold their reservations; the 12 that queued for a slot were cancelled
        assert window.reserved == 8 * worst_tokens(provider) and window.spent == 0
        assert s.requests("timeout") == 12
        await s.settled()
        assert s.sent == 8
        assert s.requests("timeout") == 20  # + the 8 attempts, each when its own timeout ended it
        assert s.count("evald_judge_circuit_state") == CIRCUIT_OPEN
        # a timed-out attempt may have been billed: charged its worst case, the reservation settled
        assert window.reserved == 0 and window.spent == 8 * worst_tokens(provider) == s.tokens_charged
        later = await s.score(range(20, 25))
        assert outcomes(later) == ["skip:circuit_open"] * 5 and s.sent == 8
        assert s.requests("circuit_open") == 5


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_answers_just_after_the_metric_deadline_are_charged_and_the_hard_budget_holds(provider: str) -> None:
    limit = 5 * worst_tokens(provider)  # five calls' worst case: the stand-in bills almost all of it for each
    async with judged(0.2, provider, timeout=2.0, max_concurrency=20, budget={"max_tokens": {"hour": limit}}) as s:
        s.llm.default = Reply(delay=0.35, bill_worst=True)
        first = await s.score(range(20))  # 5 admitted, 15 refused; the 5 metrics give up at 0.2s
        assert outcomes(first) == ["error:timed out"] * 5 + ["skip:budget_exhausted"] * 15
        second = await s.score(range(20, 40))  # before the answers: the reservations are still held
        assert outcomes(second) == ["skip:budget_exhausted"] * 20
        await s.settled()
        third = await s.score(range(40, 60))  # after: what was billed leaves less than one worst case
        assert outcomes(third) == ["skip:budget_exhausted"] * 20
        assert s.sent == 5 and s.llm.answers == 5
        assert 0 < s.llm.billed_tokens <= limit
        assert s.tokens_charged == s.llm.billed_tokens  # the late answers' usage is charged, exactly
        assert s.requests("timeout") == 5 and s.requests("ok") == 0 and s.requests("budget_exhausted") == 55
        window = s.judge.limiter.budget.windows[0] if s.judge.limiter.budget else None
        assert window is not None and window.spent == s.llm.billed_tokens and window.reserved == 0
        assert s.count("evald_judge_circuit_state") == CIRCUIT_OPEN  # 5 late answers: 5 failures, the threshold


async def test_answers_after_the_judge_timeout_are_covered_by_the_worst_case_charge() -> None:
    limit = 5 * worst_tokens()
    async with judged(2.0, timeout=0.2, max_concurrency=20, budget={"max_tokens": {"hour": limit}}) as s:
        s.llm.default = Reply(delay=0.4, bill_worst=True)
        first = await s.score(range(20))
        assert outcomes(first) == ["error:JudgeErro"] * 5 + ["skip:budget_exhausted"] * 15
        assert s.tokens_charged == limit  # each timed-out attempt charged its worst case at once
        await s.llm.until_answered(5)  # the stand-in finishes and bills after the client has gone
        assert s.llm.billed_tokens <= s.tokens_charged == limit
        assert s.requests("timeout") == 5
        assert outcomes(await s.score(range(20, 25))) == ["skip:budget_exhausted"] * 5  # checked before the circuit
        assert s.count("evald_judge_circuit_state") == CIRCUIT_OPEN


async def test_a_call_refused_for_budget_before_its_retry_ends_as_a_skip() -> None:
    async with judged(5.0, timeout=0.2, max_retries=2, retry_initial_interval=0.01,
                      budget={"max_tokens": {"hour": worst_tokens()}}) as s:
        s.llm.default = Reply(hang=True)
        assert outcomes(await s.score(range(1))) == ["skip:budget_exhausted"]
        assert s.sent == 1 and s.requests("timeout") == 1 and s.requests("budget_exhausted") == 1
        assert s.tokens_charged == worst_tokens()
