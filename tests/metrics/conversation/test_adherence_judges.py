"""``conversation_completeness``, ``turn_relevancy``, ``role_adherence``, ``topic_adherence``: judged through the
real openai and anthropic SDKs against the local stand-in."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Message
from evald.metrics.conversation.conversation_completeness import ConversationCompletenessMetric
from evald.metrics.conversation.role_adherence import RoleAdherenceMetric
from evald.metrics.conversation.topic_adherence import TopicAdherenceMetric
from evald.metrics.conversation.turn_relevancy import TurnRelevancyMetric
from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import EMAIL, expect_malformed_replies, reply, sent_blocks, sent_system

pytestmark = pytest.mark.integration
CHAT = EvalCase(
    messages=(
        Message("user", f"Hi, my email is {EMAIL}. What does the Pro plan cost?"),
        Message("assistant", "The Pro plan is $20 a month."),
        Message("user", "And can I pay yearly?"),
        Message("assistant", "Our office has a nice view of the river."),
        Message("user", "Thanks, bye."),
        Message("assistant", "Bye!"),
    ),
    expected="The user learns the price and whether yearly billing exists.",
    system_prompt="You are Billy, the billing assistant of Acme.",
)


async def test_conversation_completeness_sends_the_conversation_and_the_expected_outcome(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("yearly billing unanswered", score=3)
    score = await ConversationCompletenessMetric().a_measure(CHAT)
    assert score is not None and score.value == 0.5 and not score.passed  # threshold 0.7
    blocks = sent_blocks(sdk_llm)
    assert list(blocks) == ["conversation", "expected"]
    assert "[EMAIL_1]" in blocks["conversation"] and EMAIL not in str(sdk_llm.received)
    await expect_malformed_replies(ConversationCompletenessMetric(), CHAT, sdk_llm, '{"reasoning": "x", "score": 9}')


async def test_turn_relevancy_is_relevant_assistant_turns_over_all_of_them(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("turn 4 is off topic", relevant_turns=2)
    score = await TurnRelevancyMetric().a_measure(CHAT)
    assert score is not None and score.value == pytest.approx(2 / 3) and not score.passed  # threshold 0.7
    assert score.metadata == {"relevant_turns": 2, "total": 3, "judge": "default"}
    assert "there are 3 assistant turns" in sent_system(sdk_llm) and "(integer, 0 to 3)" in sent_system(sdk_llm)


async def test_turn_relevancy_counts_above_the_turns_are_malformed(sdk_llm: FakeLLM) -> None:
    await expect_malformed_replies(TurnRelevancyMetric(), CHAT, sdk_llm, '{"reasoning": "x", "relevant_turns": 4}',
                                   '{"reasoning": "x", "relevant_turns": 2, "total": 3}')


async def test_role_adherence_reads_the_system_prompt_as_data(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("all in role", in_role_turns=3)
    score = await RoleAdherenceMetric().a_measure(CHAT)
    assert score is not None and score.value == 1.0 and score.passed
    blocks = sent_blocks(sdk_llm)
    assert blocks["role"] == "You are Billy, the billing assistant of Acme." and "conversation" in blocks


async def test_role_adherence_with_a_configured_role(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply(in_role_turns=1)
    metric = RoleAdherenceMetric(options={"role": "A pirate who only talks about treasure."})
    score = await metric.a_measure(CHAT)
    assert score is not None and score.value == pytest.approx(1 / 3) and not score.passed
    assert "The assigned role:\nA pirate" in sent_system(sdk_llm) and "role" not in sent_blocks(sdk_llm)
    await expect_malformed_replies(metric, CHAT, sdk_llm, '{"reasoning": "x", "in_role_turns": -1}')


async def test_role_adherence_without_a_role_is_not_applicable(llm: FakeLLM) -> None:
    chat = EvalCase(messages=CHAT.messages)
    assert await RoleAdherenceMetric().a_measure(chat) is None
    assert llm.received == []


async def test_topic_adherence_lists_the_allowed_topics(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("answered off-topic", score=2)
    metric = TopicAdherenceMetric(options={"topics": ["billing", "plans"]})
    score = await metric.a_measure(CHAT)
    assert score is not None and score.value == 0.25 and not score.passed
    assert "Allowed topics:\n1. billing\n2. plans" in sent_system(sdk_llm)
    await expect_malformed_replies(metric, CHAT, sdk_llm, '{"reasoning": "x", "score": 6}')


async def test_topic_adherence_needs_topics() -> None:
    with pytest.raises(ValidationError):
        TopicAdherenceMetric(options={"topics": []})


@pytest.mark.parametrize(
    "metric", [ConversationCompletenessMetric(), TurnRelevancyMetric(), RoleAdherenceMetric(options={"role": "r"}),
               TopicAdherenceMetric(options={"topics": ["billing"]})], ids=lambda m: m.kind,
)
async def test_a_single_message_is_not_applicable(llm: FakeLLM, metric: TurnRelevancyMetric) -> None:
    assert await metric.a_measure(EvalCase(messages=(Message("user", "hi"),))) is None
    assert llm.received == []
