"""``context_relevancy``: a 1-5 band of context relevance to the input (local judge, real OpenAI SDK)."""

from __future__ import annotations

import pytest

from evald.case import Document, EvalCase
from evald.metrics.rag.context_relevancy import ContextRelevancyMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input=f"Who runs Acme? I am {EMAIL}", output="UNSENT-ANSWER",
    context=(Document(id="d1", content="Jane Doe is the CEO of Acme."), Document(id="d2", content="Weather: rain.")),
)


async def test_a_5_is_1_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(5, "scripted reasoning")
    score = await ContextRelevancyMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0  # (5 - 1) / (5 - 1)
    assert score.passed is True and score.reason == "scripted reasoning"
    assert score.metadata == {"judge_score": 5, "judge": "default"}
    assert score.dimension.value == "groundedness"


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await ContextRelevancyMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / 4


async def test_a_case_without_input_or_context_is_not_applicable(llm: FakeLLM) -> None:
    metric = ContextRelevancyMetric()
    assert await metric.a_measure(EvalCase(input="q")) is None
    assert await metric.a_measure(EvalCase(input="q", context=(Document(id="d1"),))) is None
    assert await metric.a_measure(EvalCase(context=CASE.context)) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(ContextRelevancyMetric(), CASE, llm)


async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM) -> None:
    await ContextRelevancyMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "context[0]", "context[1]"]
    assert "UNSENT-ANSWER" not in str(llm.received)  # the output is not sent
    assert "[EMAIL_1]" in blocks["input"] and EMAIL not in str(llm.received)
