"""The judge's call path with real metrics, the scorer, the real openai SDK and the fake server: the verdict
cache (one request for N identical concurrent cases, hit/miss counters, TTL), never_send, and budget or circuit
refusals reported as skips with their reason (never an error, never a 0)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest

from evald.case import Document, EvalCase
from evald.judges.cache import VerdictCache
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeSkipped
from evald.judges.prompting import Verdict
from evald.judges.registry import close_judges, register_judge
from evald.judges.telemetry import judge_telemetry
from evald.metrics.base import BaseMetric
from evald.metrics.rag.answer_relevancy import AnswerRelevancyMetric
from evald.metrics.rag.faithfulness import FaithfulnessMetric
from evald.model import ScoredCase
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config

pytestmark = pytest.mark.integration
CASE = EvalCase(trace_id="a" * 32, input="What is the capital of France?", output="Paris.", service_name="shop")


class Timer:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Setup:
    llm: FakeLLM
    tm: Telemetry
    judge: Judge

    def sample(self, name: str, **labels: str) -> float:
        return self.tm.registry.get_sample_value(name, {"judge": "default", **labels}) or 0.0

    @property
    def sent(self) -> int:
        return len(self.llm.server.requests) if self.llm.server else 0

    async def score(self, metric: BaseMetric, case: EvalCase = CASE) -> ScoredCase:
        scorer = CaseScorer(self.tm, metric_timeout=10.0)
        return await scorer.score(case, [MetricBinding(metric, "all", MetricFilter())])


@asynccontextmanager
async def judged(timer: Timer | None = None, **overrides: Any) -> AsyncIterator[Setup]:
    """Judge ``default`` on the fake server, its instruments on the scorer's registry."""
    async with fake_llm() as llm:
        tm = Telemetry()
        config = judge_config(llm, **{"cache": {"enabled": True, "ttl": "1h"}, **overrides})
        cache: VerdictCache[Verdict] | None = VerdictCache(config.cache, timer) if timer is not None else None
        judge = Judge("default", config, judge_telemetry(tm.registry), cache=cache)
        register_judge(judge)
        try:
            yield Setup(llm, tm, judge)
        finally:
            await close_judges()


async def test_n_identical_concurrent_cases_send_one_request() -> None:
    async with judged() as s:
        s.llm.default = Reply(text='{"reasoning": "on topic", "score": 5}', delay=0.3)
        metric = AnswerRelevancyMetric()
        scores = await asyncio.gather(*(metric.a_measure(CASE) for _ in range(8)))
        assert s.sent == 1
        assert all(score is not None and score.value == 1.0 and score.reason == "on topic" for score in scores)
        assert s.sample("evald_judge_cache_requests_total", result="miss") == 1
        assert s.sample("evald_judge_cache_requests_total", result="hit") == 7
        assert s.sample("evald_judge_requests_total", outcome="ok") == 1


async def test_other_content_or_another_metric_misses_and_the_ttl_expires() -> None:
    timer = Timer()
    async with judged(timer) as s:
        await AnswerRelevancyMetric().a_measure(CASE)
        await AnswerRelevancyMetric().a_measure(replace(CASE, trace_id="b" * 32))
        assert s.sent == 1  # another trace with the same texts is the same judgement
        await AnswerRelevancyMetric().a_measure(replace(CASE, output="Lyon."))
        assert s.sent == 2
        s.llm.default = Reply(text='{"reasoning": "r", "total_claims": 1, "supported_claims": 1}')
        with_context = replace(CASE, context=(Document(id="d", content="Paris is the capital."),))
        await FaithfulnessMetric().a_measure(with_context)
        assert s.sent == 3
        s.llm.default = Reply(text='{"reasoning": "r", "score": 5}')
        timer.now = 3599.0
        await AnswerRelevancyMetric().a_measure(CASE)
        assert s.sent == 3
        timer.now = 3600.0  # ttl: 1h
        await AnswerRelevancyMetric().a_measure(CASE)
        assert s.sent == 4
        assert s.sample("evald_judge_cache_requests_total", result="hit") == 2
        assert s.sample("evald_judge_cache_requests_total", result="miss") == 4


async def test_a_malformed_verdict_is_not_cached() -> None:
    async with judged() as s:
        s.llm.then(Reply(text="score 1.0"))
        result = await s.score(AnswerRelevancyMetric())
        assert [name for name, _ in result.errors] == ["answer_relevancy"]
        result = await s.score(AnswerRelevancyMetric())
        assert [score.value for score in result.scores] == [1.0] and s.sent == 2


async def test_a_part_above_its_total_is_counted_malformed_like_the_metric_says_and_not_cached() -> None:
    with_context = replace(CASE, context=(Document(id="d", content="Paris is the capital."),))
    async with judged() as s:
        s.llm.default = Reply(text='{"reasoning": "r", "total_claims": 1, "supported_claims": 2}')
        for sent in (1, 2):  # asked again: the verdict was not cached
            result = await s.score(FaithfulnessMetric(), with_context)
            assert [name for name, _ in result.errors] == ["faithfulness"] and not result.scores
            assert "supported_claims=2 is above total_claims=1" in result.errors[0][1]
            assert s.sent == sent
        assert s.sample("evald_judge_requests_total", outcome="malformed") == 2
        assert s.sample("evald_judge_requests_total", outcome="ok") == 0


async def test_a_never_send_service_is_skipped_with_its_reason_and_nothing_is_sent() -> None:
    async with judged(never_send={"service_names": ["payments"]}) as s:
        secret = replace(CASE, service_name="payments", output="card 4111 1111 1111 1111")
        result = await s.score(AnswerRelevancyMetric(), secret)
        assert result.skipped == (("answer_relevancy", "never_send"),) and not result.errors and not result.scores
        assert s.sent == 0
        assert s.sample("evald_judge_requests_total", outcome="never_send") == 1
        skips = s.tm.registry.get_sample_value(
            "evald_metric_skips_total", {"metric": "answer_relevancy", "reason": "never_send"}
        )
        assert skips == 1
        result = await s.score(AnswerRelevancyMetric())  # service "shop" is judged
        assert len(result.scores) == 1 and s.sent == 1


async def test_an_exhausted_budget_skips_the_metric_with_reason_budget_exhausted() -> None:
    async with judged(budget={"max_tokens": {"hour": 100}}) as s:  # less than one worst-case call
        result = await s.score(AnswerRelevancyMetric())
        assert result.skipped == (("answer_relevancy", "budget_exhausted"),) and not result.errors
        assert s.sent == 0
        assert s.sample("evald_judge_requests_total", outcome="budget_exhausted") == 1
        with pytest.raises(JudgeSkipped) as caught:
            await AnswerRelevancyMetric().a_measure(CASE)
        assert "hourly budget 100 tokens" in str(caught.value)


async def test_an_open_circuit_skips_the_metric_with_reason_circuit_open() -> None:
    async with judged(max_retries=0, circuit_breaker={"failures": 1, "reset_after": "1h"}) as s:
        s.llm.then(Reply(status=500))
        first = await s.score(AnswerRelevancyMetric())
        assert [name for name, _ in first.errors] == ["answer_relevancy"]  # the failure itself is an error
        second = await s.score(AnswerRelevancyMetric())
        assert second.skipped == (("answer_relevancy", "circuit_open"),) and not second.errors
        assert s.sent == 1
