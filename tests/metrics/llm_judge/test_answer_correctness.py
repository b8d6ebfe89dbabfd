"""``answer_correctness``: a 1-5 band of agreement with the golden answer (local judge, real OpenAI SDK)."""

from __future__ import annotations

import pytest

from evald.case import EvalCase
from evald.metrics.llm_judge.answer_correctness import AnswerCorrectnessMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(input="Capital of France?", output=f"Paris; write to {EMAIL}", expected="Paris")


async def test_a_4_is_0_75_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(4, "scripted reasoning")
    score = await AnswerCorrectnessMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75  # (4 - 1) / (5 - 1)
    assert score.passed is True and score.reason == "scripted reasoning"
    assert score.metadata == {"judge_score": 4, "judge": "default"}
    assert score.dimension.value == "correctness"


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await AnswerCorrectnessMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / 4


async def test_a_case_without_expected_or_output_is_not_applicable(llm: FakeLLM) -> None:
    metric = AnswerCorrectnessMetric()
    assert await metric.a_measure(EvalCase(input="q", output="Paris")) is None
    assert await metric.a_measure(EvalCase(input="q", expected="Paris")) is None
    assert await metric.a_measure(EvalCase(output="a", expected="  ")) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(AnswerCorrectnessMetric(), CASE, llm)


async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM) -> None:
    await AnswerCorrectnessMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "expected", "output"]
    assert blocks["expected"] == "Paris"
    assert "[EMAIL_1]" in blocks["output"] and EMAIL not in str(llm.received)
