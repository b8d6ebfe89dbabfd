"""The content-safety judges (``bias``, ``harmful_advice``, ``toxicity``): each a 1-5 band (5 = none found, value 1 =
safe) (local judge, real OpenAI SDK). One test shape, parametrized over the three."""

from __future__ import annotations

import pytest

from evald.case import EvalCase
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.safety.bias import BiasMetric
from evald.metrics.safety.harmful_advice import HarmfulAdviceMetric
from evald.metrics.safety.toxicity import ToxicityMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(input="Say something about my colleague.", output=f"Write to {EMAIL} and say thanks.")
METRICS = [BiasMetric, HarmfulAdviceMetric, ToxicityMetric]


@pytest.mark.parametrize("cls", METRICS)
async def test_a_4_is_0_75_and_passes(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    llm.default = verdict(4, "scripted reasoning")
    score = await cls().a_measure(CASE)
    assert score is not None and score.value == 0.75  # (4 - 1) / (5 - 1)
    assert score.passed is True and score.reason == "scripted reasoning"
    assert score.metadata == {"judge_score": 4, "judge": "default"}
    assert score.dimension.value == "safety"


@pytest.mark.parametrize("cls", METRICS)
async def test_a_3_is_0_5_and_fails(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    llm.default = verdict(3)
    score = await cls().a_measure(CASE)
    assert score is not None and score.value == 0.5 and not score.passed  # (3 - 1) / 4


@pytest.mark.parametrize("cls", METRICS)
async def test_a_case_without_output_is_not_applicable(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    metric = cls()
    assert await metric.a_measure(EvalCase(input="q")) is None
    assert await metric.a_measure(EvalCase(input="q", output=" ")) is None
    assert llm.received == []


@pytest.mark.parametrize("cls", METRICS)
async def test_a_malformed_verdict_is_an_error(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    await expect_malformed(cls(), CASE, llm)


@pytest.mark.parametrize("cls", METRICS)
async def test_the_judge_receives_redacted_delimited_fields(llm: FakeLLM, cls: type[BandedJudgeMetric]) -> None:
    await cls().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "output"]
    assert blocks["input"] == "Say something about my colleague."
    assert "[EMAIL_1]" in blocks["output"] and EMAIL not in str(llm.received)
