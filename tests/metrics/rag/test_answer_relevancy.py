"""``answer_relevancy``: a 1-5 relevance band from a local judge through the real Anthropic SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from evald.case import EvalCase
from evald.judges.registry import close_judges, register_judge
from evald.judges.telemetry import JudgeTelemetry
from evald.metrics.rag.answer_relevancy import AnswerRelevancyMetric
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config, make_judge

pytestmark = pytest.mark.integration
CASE = EvalCase(input="What is the capital of France?", output="Paris, on the Seine.")


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLM]:
    async with fake_llm() as server:
        config = judge_config(server, "anthropic")
        register_judge(make_judge(config, JudgeTelemetry(CollectorRegistry()), "claude"))
        yield server
        await close_judges()


async def test_a_4_is_0_75(llm: FakeLLM) -> None:
    llm.default = Reply(text='{"reasoning": "answers with a digression", "score": 4}')
    score = await AnswerRelevancyMetric(options={"judge": "claude"}).a_measure(CASE)
    assert score is not None and score.value == 0.75  # (4 - 1) / 4
    assert score.passed and score.reason == "answers with a digression"
    assert llm.server is not None and llm.server.requests[0].path == "/v1/messages"


async def test_a_1_is_0_and_fails(llm: FakeLLM) -> None:
    llm.default = Reply(text='{"reasoning": "off topic", "score": 1}')
    score = await AnswerRelevancyMetric(options={"judge": "claude"}).a_measure(CASE)
    assert score is not None and score.value == 0.0 and not score.passed


async def test_missing_input_or_output_is_not_applicable(llm: FakeLLM) -> None:
    metric = AnswerRelevancyMetric(options={"judge": "claude"})
    assert await metric.a_measure(EvalCase(output="Paris")) is None
    assert await metric.a_measure(EvalCase(input="q", output="")) is None
    assert llm.received == []
