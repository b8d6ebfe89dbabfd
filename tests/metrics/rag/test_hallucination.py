"""``hallucination``: a 1-5 band (5 = nothing unsupported) from a local judge through the real OpenAI SDK."""

from __future__ import annotations

import pytest

from evald.case import Document, EvalCase
from evald.metrics.rag.hallucination import HallucinationMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input="Who runs Acme?", output=f"Jane Doe ({EMAIL}) has run Acme since 1990.",
    context=(Document(id="d1", content="Jane Doe is the CEO of Acme."), Document(id="d2")),
)


async def test_a_4_is_0_75_and_passes_the_0_75_threshold(llm: FakeLLM) -> None:
    llm.default = verdict(4, "since 1990 is absent from the context")
    score = await HallucinationMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75  # (4 - 1) / (5 - 1)
    assert score.passed and score.reason == "since 1990 is absent from the context"
    assert score.metadata == {"judge_score": 4, "judge": "default"}


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await HallucinationMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / 4


async def test_without_context_or_output_it_is_not_applicable(llm: FakeLLM) -> None:
    metric = HallucinationMetric()
    assert await metric.a_measure(EvalCase(input="q", output="a")) is None
    assert await metric.a_measure(EvalCase(output="a", context=(Document(id="d1"),))) is None
    assert await metric.a_measure(EvalCase(context=CASE.context)) is None
    assert llm.received == []


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(HallucinationMetric(), CASE, llm)


async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM) -> None:
    await HallucinationMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "context[0]", "output"]  # d2 has no content
    assert blocks["context[0]"] == "Jane Doe is the CEO of Acme."
    assert "[EMAIL_1]" in blocks["output"] and EMAIL not in str(llm.received)
