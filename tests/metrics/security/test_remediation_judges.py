"""The judged security remediation kinds (vulnerability_correctness, security_completeness, code_quality,
explanation_quality, root_cause_analysis, actionability): 0-10 bands through the real openai and anthropic SDKs
against the local stand-in."""

from __future__ import annotations

import pytest

from evald.case import Dimension, EvalCase
from evald.metrics.registry import get_metric_class
from evald.metrics.security.actionability import ActionabilityMetric
from evald.metrics.security.code_quality import CodeQualityMetric
from evald.metrics.security.explanation_quality import ExplanationQualityMetric
from evald.metrics.security.remediation_judge import RemediationJudgeMetric
from evald.metrics.security.root_cause_analysis import RootCauseAnalysisMetric
from evald.metrics.security.security_completeness import SecurityCompletenessMetric
from evald.metrics.security.vulnerability_correctness import VulnerabilityCorrectnessMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import expect_malformed_replies, reply, sent_blocks, sent_system

pytestmark = pytest.mark.integration
KINDS: list[type[RemediationJudgeMetric]] = [
    VulnerabilityCorrectnessMetric, SecurityCompletenessMetric, CodeQualityMetric, ExplanationQualityMetric,
    RootCauseAnalysisMetric, ActionabilityMetric,
]
CASE = EvalCase(
    input="CWE-79: Reflected XSS in user_profile.py line 42. User input rendered without escaping.",
    output="## Fix\n```python\nfrom markupsafe import escape\nname = escape(request.args.get('name', ''))\n```",
)


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.kind)
async def test_a_band_of_ten_maps_to_tenths(sdk_llm: FakeLLM, cls: type[RemediationJudgeMetric]) -> None:
    sdk_llm.default = reply("escapes the sink", score=7)
    score = await cls().a_measure(CASE)
    assert score is not None and score.value == 0.7 and score.passed  # 7 / 10; threshold 0.5
    assert score.metadata == {"judge_score": 7, "judge": "default"}
    sdk_llm.default = reply(score=4)
    score = await cls().a_measure(CASE)
    assert score is not None and score.value == 0.4 and not score.passed
    assert list(sent_blocks(sdk_llm)) == ["input", "output"]
    system = sent_system(sdk_llm)
    assert cls.criteria in system and cls.steps[0] in system and "(integer, 0 to 10)" in system
    assert all(f"{low}-{high}: {text}" in system for low, high, text in cls.rubric)


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.kind)
async def test_a_malformed_verdict_is_an_error(sdk_llm: FakeLLM, cls: type[RemediationJudgeMetric]) -> None:
    await expect_malformed_replies(cls(), CASE, sdk_llm, '{"reasoning": "x", "score": 11}',
                                   '{"reasoning": "x", "score": 7.5}')


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.kind)
async def test_without_an_output_it_is_not_applicable(llm: FakeLLM, cls: type[RemediationJudgeMetric]) -> None:
    assert await cls().a_measure(EvalCase(input=CASE.input)) is None
    assert llm.received == []


def test_the_rubrics_cover_0_to_10_without_gaps_and_the_kinds_are_registered() -> None:
    for cls in KINDS:
        bands = [(low, high) for low, high, _ in cls.rubric]
        assert bands[0][0] == 0 and bands[-1][1] == 10
        assert all(high + 1 == next_low for (_, high), (next_low, _) in zip(bands, bands[1:], strict=False))
        assert get_metric_class(cls.kind) is cls and cls.family == "security"
    assert RootCauseAnalysisMetric.dimension is Dimension.GROUNDEDNESS
    assert {cls.dimension for cls in KINDS if cls is not RootCauseAnalysisMetric} == {Dimension.CORRECTNESS}
