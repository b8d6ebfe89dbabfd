"""The conversation judges (``conversation_coherence``, ``goal_accuracy``, ``knowledge_retention``): each a 1-5 band
over the rendered conversation (local judge, real OpenAI SDK). One test shape, parametrized over the three."""

from __future__ import annotations

import pytest

from evald.case import EvalCase, Message, ToolCall
from evald.metrics.conversation.conversation_coherence import ConversationCoherenceMetric
from evald.metrics.conversation.goal_accuracy import GoalAccuracyMetric
from evald.metrics.conversation.knowledge_retention import KnowledgeRetentionMetric
from evald.metrics.judged.banded import BandedJudgeMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(messages=(
    Message("user", f"I'm Jane, {EMAIL}. Book a table for 2 at 8pm."),
    Message("assistant", None, tool_calls=(ToolCall("book", {"people": 2}),)),
    Message("assistant", "Booked for 2 at 8pm, Jane."),
))
METRICS = [ConversationCoherenceMetric, GoalAccuracyMetric, KnowledgeRetentionMetric]


@pytest.mark.parametrize("cls", METRICS)
async def test_a_4_is_0_75_and_passes_a_2_is_0_25_and_fails(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    llm.then(verdict(4, "consistent"), verdict(2))
    high = await cls().a_measure(CASE)
    assert high is not None and high.value == 0.75 and high.passed  # (4 - 1) / (5 - 1)
    assert high.reason == "consistent" and high.metadata == {"judge_score": 4, "judge": "default"}
    low = await cls().a_measure(CASE)
    assert low is not None and low.value == 0.25 and not low.passed  # (2 - 1) / 4


@pytest.mark.parametrize("cls", METRICS)
async def test_fewer_than_two_turns_is_not_applicable(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    assert await cls().a_measure(EvalCase(input="hi", output="hello")) is None
    assert await cls().a_measure(EvalCase(messages=(Message("user", "hi"),))) is None
    assert llm.received == []


@pytest.mark.parametrize("cls", METRICS)
async def test_a_malformed_verdict_is_an_error(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    await expect_malformed(cls(), CASE, llm)


@pytest.mark.parametrize("cls", METRICS)
async def test_the_judge_receives_the_redacted_delimited_conversation(
    llm: FakeLLM, cls: type[BandedJudgeMetric]
) -> None:
    await cls().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["conversation"]
    assert blocks["conversation"].split("\n") == [
        "[1] user: I'm Jane, [EMAIL_1]. Book a table for 2 at 8pm.",
        "[2] assistant: [calls: book]",
        "[3] assistant: Booked for 2 at 8pm, Jane.",
    ]
    assert EMAIL not in str(llm.received)
