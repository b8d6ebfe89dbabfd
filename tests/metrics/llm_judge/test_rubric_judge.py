"""``rubric_judge``: the judge's rubric level mapped to [0, 1] (local judge, real OpenAI SDK)."""

from __future__ import annotations

from typing import Any

import pytest

from evald.case import EvalCase
from evald.metrics.llm_judge.rubric_judge import RubricJudgeMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, sent_system, verdict

pytestmark = pytest.mark.integration
RUBRIC = {0: "wrong", 1: "mostly wrong", 2: "half right", 3: "right, unclear", 4: "right and clear"}
CASE = EvalCase(input="Capital of France?", output=f"Paris. Mail {EMAIL}", expected="Paris")


async def test_level_3_of_0_to_4_is_0_75(llm: FakeLLM) -> None:
    llm.default = verdict(3, "right but unclear")
    score = await RubricJudgeMetric(options={"rubric": RUBRIC, "criteria": "Correctness."}).a_measure(CASE)
    assert score is not None and score.value == 0.75 and score.passed  # (3 - 0) / (4 - 0)
    assert score.reason == "right but unclear" and score.metadata == {"judge_score": 3, "judge": "default"}
    system = sent_system(llm)
    assert "Correctness." in system and "0: wrong\n1: mostly wrong" in system and "4: right and clear" in system


async def test_level_2_of_1_to_3_is_0_5(llm: FakeLLM) -> None:
    llm.default = verdict(2)
    score = await RubricJudgeMetric(options={"rubric": {1: "bad", 2: "ok", 3: "good"}}).a_measure(CASE)
    assert score is not None and score.value == 0.5  # (2 - 1) / (3 - 1)


async def test_no_output_is_not_applicable(llm: FakeLLM) -> None:
    assert await RubricJudgeMetric(options={"rubric": RUBRIC}).a_measure(EvalCase(input="q")) is None
    assert llm.received == []


async def test_a_level_outside_the_rubric_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(RubricJudgeMetric(options={"rubric": RUBRIC}), CASE, llm)  # 9 > 4


async def test_the_judge_receives_the_chosen_redacted_delimited_fields(llm: FakeLLM) -> None:
    llm.default = verdict(4)
    await RubricJudgeMetric(options={"rubric": RUBRIC, "fields": ["expected", "output"]}).a_measure(CASE)
    assert sent_blocks(llm) == {"expected": "Paris", "output": "Paris. Mail [EMAIL_1]"}


@pytest.mark.parametrize(
    "options",
    [{}, {"rubric": {1: "only one"}}, {"rubric": {1: "a", 3: "c"}}, {"rubric": {1: "a", 2: " "}},
     {"rubric": {-1: "a", 0: "b"}}, {"rubric": RUBRIC, "fields": ["input"]}],
)
def test_unusable_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RubricJudgeMetric(options=options)
