"""``prompt_alignment``: followed instructions over all configured instructions (real openai and anthropic SDKs
against the local stand-in)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.llm_judge.prompt_alignment import PromptAlignmentMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import expect_malformed_replies, reply, sent_blocks, sent_system

pytestmark = pytest.mark.integration
INSTRUCTIONS = ["Answer in French.", "Use at most one sentence.", "End with a question."]
CASE = EvalCase(input="Where is the Louvre?", output="Le Louvre est à Paris.")


async def test_the_value_is_followed_over_all(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("no question at the end", followed_instructions=2)
    score = await PromptAlignmentMetric(options={"instructions": INSTRUCTIONS}).a_measure(CASE)
    assert score is not None and score.value == pytest.approx(2 / 3) and score.passed  # threshold 0.5
    assert score.metadata == {"followed_instructions": 2, "total": 3, "judge": "default"}
    system = sent_system(sdk_llm)
    assert "1. Answer in French.\n2. Use at most one sentence.\n3. End with a question." in system
    assert list(sent_blocks(sdk_llm)) == ["input", "output"]


async def test_a_count_above_the_instructions_is_malformed(sdk_llm: FakeLLM) -> None:
    metric = PromptAlignmentMetric(options={"instructions": INSTRUCTIONS})
    await expect_malformed_replies(metric, CASE, sdk_llm, '{"reasoning": "x", "followed_instructions": 4}')


async def test_instructions_are_required_and_an_output_is_needed(llm: FakeLLM) -> None:
    with pytest.raises(ValidationError):
        PromptAlignmentMetric(options={"instructions": []})
    assert await PromptAlignmentMetric(options={"instructions": INSTRUCTIONS}).a_measure(EvalCase(input="q")) is None
    assert llm.received == []
