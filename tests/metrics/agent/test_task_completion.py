"""``task_completion``: a 1-5 band from a judge that sees the trajectory (local judge, real OpenAI SDK)."""

from __future__ import annotations

import pytest

from evald.case import EvalCase, ToolCall
from evald.metrics.agent.task_completion import TaskCompletionMetric
from evald.metrics.judged.banded import truncate
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed, sent_blocks, verdict

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input=f"Email the Q3 report to {EMAIL}.",
    tool_calls=(
        ToolCall("find_file", {"name": "q3.pdf"}, {"path": "/r/q3.pdf"}),
        ToolCall("send_email", {"to": EMAIL, "body": "x" * 600}, "quota exceeded", error=True),
    ),
    output="Done, the report was sent.",
)


async def test_a_2_is_0_25_and_fails(llm: FakeLLM) -> None:
    llm.default = verdict(2, "send_email failed; the claim of success is false")
    score = await TaskCompletionMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # (2 - 1) / (5 - 1)
    assert score.reason == "send_email failed; the claim of success is false"
    assert score.metadata == {"judge_score": 2, "judge": "default"} and score.dimension.value == "trajectory"


async def test_a_5_is_1_and_passes(llm: FakeLLM) -> None:
    llm.default = verdict(5)
    score = await TaskCompletionMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.passed  # (5 - 1) / 4


async def test_without_input_or_anything_done_it_is_not_applicable(llm: FakeLLM) -> None:
    metric = TaskCompletionMetric()
    assert await metric.a_measure(EvalCase(output="done", tool_calls=CASE.tool_calls)) is None
    assert await metric.a_measure(EvalCase(input="do it")) is None
    assert llm.received == []


async def test_output_alone_or_tool_calls_alone_are_enough(llm: FakeLLM) -> None:
    llm.default = verdict(3)
    assert await TaskCompletionMetric().a_measure(EvalCase(input="do it", output="done")) is not None
    assert list(sent_blocks(llm)) == ["input", "output"]
    assert await TaskCompletionMetric().a_measure(EvalCase(input="do it", tool_calls=CASE.tool_calls)) is not None
    assert list(sent_blocks(llm)) == ["input", "trajectory"]


async def test_a_malformed_verdict_is_an_error(llm: FakeLLM) -> None:
    await expect_malformed(TaskCompletionMetric(), CASE, llm)


async def test_the_judge_receives_a_compact_truncated_redacted_trajectory(llm: FakeLLM) -> None:
    await TaskCompletionMetric().a_measure(CASE)
    blocks = sent_blocks(llm)
    assert list(blocks) == ["input", "trajectory", "output"]
    first, second = blocks["trajectory"].split("\n")
    assert first == '1. find_file({"name":"q3.pdf"}) -> {"path":"/r/q3.pdf"}'
    # the 600-character argument is cut before 500 characters, at the quote that opens the long value
    assert second == '2. send_email({"to":"[EMAIL_1]","body":...) -> ERROR quota exceeded'

    assert "[EMAIL_1]" in blocks["input"] and EMAIL not in str(llm.received)


def test_truncation_keeps_a_token_whole_or_drops_it() -> None:
    key = "sk-" + "a" * 40
    assert truncate(f"{'w ' * 240}{key} end", 500) == "w " * 239 + "w..."  # the key would straddle 500
    assert truncate("b" * 600, 500) == "b" * 500 + "..."  # no separator: a hard cut
    assert truncate("short", 500) == "short"
