"""``faithfulness``: supported claims / claims, from a local judge through the real OpenAI SDK."""

from __future__ import annotations

import pytest

from evald.case import Document, EvalCase
from evald.judges.limiter import JudgeError
from evald.metrics.rag.faithfulness import FaithfulnessMetric
from tests.judges.fake_llm import FakeLLM, Reply

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input="Tell me about Paris.", output="Paris is the capital of France. It has 2.1M people. It hosts the Louvre.",
    context=(Document(id="d1", content="Paris, capital of France, home of the Louvre."), Document(id="d2")),
)


def claims(total: int, supported: int) -> Reply:
    return Reply(text=f'{{"reasoning": "listed", "total_claims": {total}, "supported_claims": {supported}}}')


async def test_three_of_four_supported_claims_is_0_75_and_fails_the_0_8_threshold(llm: FakeLLM) -> None:
    llm.default = claims(4, 3)
    score = await FaithfulnessMetric().a_measure(CASE)
    assert score is not None and score.value == 0.75  # 3 / 4
    assert not score.passed and score.reason == "listed"
    assert score.metadata["total_claims"] == 4 and score.metadata["supported_claims"] == 3
    sent = str(llm.received[0]["messages"])
    assert 'name="context[0]"' in sent and "context[1]" not in sent  # a document without content is left out


async def test_all_supported_passes(llm: FakeLLM) -> None:
    llm.default = claims(3, 3)
    score = await FaithfulnessMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.passed


async def test_no_claims_is_vacuously_faithful(llm: FakeLLM) -> None:
    llm.default = claims(0, 0)
    score = await FaithfulnessMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.metadata["total_claims"] == 0


async def test_more_supported_than_claims_is_malformed(llm: FakeLLM) -> None:
    llm.default = claims(2, 3)
    with pytest.raises(JudgeError) as caught:
        await FaithfulnessMetric().a_measure(CASE)
    assert caught.value.outcome == "malformed"


async def test_without_context_or_output_it_is_not_applicable(llm: FakeLLM) -> None:
    metric = FaithfulnessMetric()
    assert await metric.a_measure(EvalCase(output="Paris.")) is None
    assert await metric.a_measure(EvalCase(output="Paris.", context=(Document(id="d1"),))) is None
    assert await metric.a_measure(EvalCase(context=CASE.context)) is None
    assert llm.received == []
