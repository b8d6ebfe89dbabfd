"""``tool_use_quality``: a 1-5 band of the agent's tool use; needs tool calls (local judge, real OpenAI SDK)."""

from __future__ import annotations

import pytest

from evald.case import EvalCase, ToolCall
from evald.metrics.agent.tool_use_quality import ToolUseQualityMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input="What is the weather in Paris?",
    tool_calls=(ToolCall("weather", {"city": "Paris"}, "rain"), ToolCall("weather", {"city": "Paris"}, "rain"),
                ToolCall("lookup_user", {"email": EMAIL})),
    output="Rain.",
)


async def test_a_4_is_0_75_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(4, "one repeated call")
    score = await ToolUseQualityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75 and score.passed  # (4 - 1) / (5 - 1)
    assert score.reason == "one repeated call" and score.metadata == {"judge_score": 4, "judge": "default"}


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await ToolUseQualityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / 4


async def test_without_tool_calls_it_is_not_applicable(llm: FakeLLM) -> None:
    assert await ToolUseQualityMetric().a_measure(EvalCase(input="q", output="a")) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(ToolUseQualityMetric(), CASE, llm)


async def test_the_judge_receives_the_redacted_delimited_trajectory(llm: FakeLLM) -> None:
    await ToolUseQualityMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "trajectory", "output"]
    assert blocks["trajectory"].split("\n") == [
        '1. weather({"city":"Paris"}) -> rain', '2. weather({"city":"Paris"}) -> rain',
        '3. lookup_user({"email":"[EMAIL_1]"}) -> (no result)',
    ]
    assert EMAIL not in str(llm.received)
