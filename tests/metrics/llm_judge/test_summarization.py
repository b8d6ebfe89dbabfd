"""``summarization``: a 1-5 band of the output as a summary of the input (local judge, real OpenAI SDK)."""

from __future__ import annotations

import pytest

from evald.case import EvalCase
from evald.metrics.llm_judge.summarization import SummarizationMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input=f"Acme Q3: revenue up 10%, costs flat, new CEO. Contact {EMAIL}.", output="Revenue +10%, new CEO.",
)


async def test_a_5_is_1_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(5, "scripted reasoning")
    score = await SummarizationMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0  # (5 - 1) / (5 - 1)
    assert score.passed is True and score.reason == "scripted reasoning"
    assert score.metadata == {"judge_score": 5, "judge": "default"}
    assert score.dimension.value == "correctness"


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await SummarizationMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / 4


async def test_a_case_without_input_or_output_is_not_applicable(llm: FakeLLM) -> None:
    metric = SummarizationMetric()
    assert await metric.a_measure(EvalCase(output="summary")) is None
    assert await metric.a_measure(EvalCase(input="source")) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(SummarizationMetric(), CASE, llm)


async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM) -> None:
    await SummarizationMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "output"]
    assert blocks["output"] == "Revenue +10%, new CEO."
    assert "[EMAIL_1]" in blocks["input"] and EMAIL not in str(llm.received)
