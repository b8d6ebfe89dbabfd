"""``context_recall``: attributed statements of the expected answer over all of them (real openai and anthropic
SDKs against the local stand-in)."""

from __future__ import annotations

import pytest

from evald.case import Dimension, Document, EvalCase
from evald.metrics.rag.context_recall import ContextRecallMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import expect_malformed_replies, reply, sent_blocks

pytestmark = pytest.mark.integration
CASE = EvalCase(
    input="Tell me about Paris.", output="Paris is big.",
    expected="Paris is the capital of France. It has 2.1 million inhabitants. It hosted the 2024 Olympics.",
    context=(Document(id="a", content="Paris is the capital of France."), Document(id="b", content=""),
             Document(id="c", content="The 2024 Summer Olympics were held in Paris.")),
)


async def test_the_value_is_attributed_over_total(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("population not in context", total_statements=3, attributed_statements=2)
    score = await ContextRecallMetric().a_measure(CASE)
    assert score is not None and score.value == pytest.approx(2 / 3) and not score.passed  # threshold 0.7
    assert score.metadata == {"total_statements": 3, "attributed_statements": 2, "judge": "default"}
    assert score.dimension is Dimension.GROUNDEDNESS
    assert list(sent_blocks(sdk_llm)) == ["context[0]", "context[2]", "expected"]  # the empty document is not sent


async def test_an_expected_answer_without_statements_is_fully_recalled(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply(total_statements=0, attributed_statements=0)
    score = await ContextRecallMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.metadata["total_statements"] == 0


async def test_more_attributed_than_total_keys_out_of_order_or_a_prose_verdict_are_malformed(sdk_llm: FakeLLM) -> None:
    """The verdict's keys must come in the prompt's order (strict parsing, evald/judges/prompting.py)."""
    await expect_malformed_replies(
        ContextRecallMetric(), CASE, sdk_llm, '{"reasoning": "x", "total_statements": 2, "attributed_statements": 3}',
        '{"reasoning": "x", "attributed_statements": 1, "total_statements": 2}',
    )


async def test_without_expected_or_context_it_is_not_applicable(llm: FakeLLM) -> None:
    metric = ContextRecallMetric()
    assert await metric.a_measure(EvalCase(expected="x")) is None
    assert await metric.a_measure(EvalCase(context=CASE.context)) is None
    assert llm.received == []
