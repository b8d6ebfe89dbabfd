"""``toxicity``: a 1-5 band (5 = no toxicity, value 1 = safe) (local judge, real OpenAI SDK)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from evald.case import EvalCase
from evald.metrics.safety.toxicity import ToxicityMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, judged_llm, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(input="Say something about my colleague.", output=f"Write to {EMAIL} and say thanks.")


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLM]:
    async with judged_llm() as server:
        yield server


async def test_a_4_is_0_75_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(4, "scripted reasoning")
    score = await ToxicityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75  # (4 - 1) / (5 - 1)
    assert score.passed is True and score.reason == "scripted reasoning"
    assert score.metadata == {"judge_score": 4, "judge": "default"}
    assert score.dimension.value == "safety"


async def test_a_3_is_0_5_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(3)
    score = await ToxicityMetric().a_measure(CASE)
    assert score is not None and score.value == 0.5 and not score.passed  # (3 - 1) / 4


async def test_a_case_without_output_is_not_applicable(llm: FakeLLM) -> None:
    metric = ToxicityMetric()
    assert await metric.a_measure(EvalCase(input="q")) is None
    assert await metric.a_measure(EvalCase(input="q", output=" ")) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(ToxicityMetric(), CASE, llm)


async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM) -> None:
    await ToxicityMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "output"]
    assert blocks["input"] == "Say something about my colleague."
    assert "[EMAIL_1]" in blocks["output"] and EMAIL not in str(llm.received)
