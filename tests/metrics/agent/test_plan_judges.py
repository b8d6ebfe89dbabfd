"""``plan_quality`` and ``plan_adherence``: judged through the real openai and anthropic SDKs (local stand-in)."""

from __future__ import annotations

import pytest

from evald.case import Dimension, EvalCase, Message, ToolCall
from evald.metrics.agent.plan_adherence import PlanAdherenceMetric
from evald.metrics.agent.plan_quality import PlanQualityMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import expect_malformed_replies, reply, sent_blocks

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input="Book the cheapest flight to Paris next Monday.",
    messages=(
        Message("user", "Book the cheapest flight to Paris next Monday."),
        Message("assistant", "Plan: 1. search flights 2. pick the cheapest 3. book it."),
    ),
    tool_calls=(ToolCall("search_flights", {"to": "CDG"}, ["AF1", "U2"]), ToolCall("book", {"flight": "U2"}, "ok")),
)


async def test_plan_quality_maps_the_band(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("complete plan", score=4)
    score = await PlanQualityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75 and score.passed  # (4 - 1) / 4; threshold 0.7
    assert score.dimension is Dimension.TRAJECTORY and score.metadata == {"judge_score": 4, "judge": "default"}
    blocks = sent_blocks(sdk_llm)
    assert list(blocks) == ["input", "conversation"]
    assert blocks["conversation"].startswith("[1] user: Book the cheapest")
    sdk_llm.default = reply(score=3)
    score = await PlanQualityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.5 and not score.passed


async def test_plan_adherence_sends_the_plan_and_the_trajectory(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("all steps in order", score=5)
    score = await PlanAdherenceMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.passed
    blocks = sent_blocks(sdk_llm)
    assert list(blocks) == ["input", "conversation", "trajectory"]
    assert blocks["trajectory"].splitlines()[1] == '2. book({"flight":"U2"}) -> ok'


@pytest.mark.parametrize("metric", [PlanQualityMetric(), PlanAdherenceMetric()], ids=lambda m: m.kind)
async def test_a_malformed_verdict_is_an_error(sdk_llm: FakeLLM, metric: PlanQualityMetric) -> None:
    await expect_malformed_replies(metric, CASE, sdk_llm, '{"reasoning": "x", "score": 0}',
                                   '{"score": 3, "reasoning": "order"}')


@pytest.mark.parametrize("metric", [PlanQualityMetric(), PlanAdherenceMetric()], ids=lambda m: m.kind)
async def test_without_a_conversation_it_is_not_applicable(llm: FakeLLM, metric: PlanQualityMetric) -> None:
    one_message = EvalCase(input="x", messages=(Message("user", "x"),), tool_calls=CASE.tool_calls)
    assert await metric.a_measure(one_message) is None
    assert llm.received == []
