from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Message, Score
from evald.metrics.conversation.conversation_resolution import ConversationResolutionMetric

SUPPORT_CHAT = (
    Message("system", "You are a support agent."),
    Message("user", "My order never arrived."),
    Message("assistant", "Sorry to hear that. Could you share the order number?"),
    Message("user", "It is 1234."),
    Message("assistant", "I have issued a refund for order 1234. Is there anything else?"),
)


def measure(case: EvalCase, **options: Any) -> Score | None:
    return ConversationResolutionMetric(options=options).measure(case)


def test_resolved_pattern_in_the_last_reply_scores_1() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=[r"issued a refund", r"\bresolved\b"])
    assert score is not None and score.value == 1.0 and score.passed
    assert score.metadata == {"outcome": "resolved", "matched_pattern": "issued a refund", "scope": "last_assistant"}
    assert score.reason == "resolved: 'issued a refund' matched 'issued a refund'"


def test_matching_is_case_insensitive() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["ISSUED A REFUND"])
    assert score is not None and score.value == 1.0


def test_no_match_scores_0_when_a_match_is_required() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["ticket closed"])
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.metadata["outcome"] == "no_match" and score.metadata["matched_pattern"] is None
    assert score.reason == "no pattern matched (a match is required)"


def test_no_match_scores_1_when_no_match_is_required() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), unresolved_patterns=["escalat"], require_match=False)
    assert score is not None and score.value == 1.0 and score.reason == "no pattern matched"


def test_unresolved_patterns_take_precedence() -> None:
    score = measure(
        EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["refund"], unresolved_patterns=[r"anything else\?"]
    )
    assert score is not None and score.value == 0.0
    assert score.metadata["outcome"] == "unresolved" and score.metadata["matched_pattern"] == r"anything else\?"


def test_last_assistant_ignores_earlier_replies() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["order number"])
    assert score is not None and score.value == 0.0  # only in the first reply


def test_any_assistant_searches_every_reply() -> None:
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["order number"], scope="any_assistant")
    assert score is not None and score.value == 1.0


def test_last_user_scope() -> None:
    case = EvalCase(messages=(*SUPPORT_CHAT, Message("user", "That did not help at all.")))
    score = measure(case, unresolved_patterns=[r"did(n't| not) help"], scope="last_user", require_match=False)
    assert score is not None and score.value == 0.0 and score.metadata["scope"] == "last_user"
    # the last user message of SUPPORT_CHAT is "It is 1234."
    score = measure(EvalCase(messages=SUPPORT_CHAT), resolved_patterns=["1234"], scope="last_user")
    assert score is not None and score.value == 1.0


def test_tool_call_only_assistant_messages_are_skipped() -> None:
    messages = (Message("user", "weather?"), Message("assistant", "It is sunny."), Message("assistant", None))
    score = measure(EvalCase(messages=messages), resolved_patterns=["sunny"])
    assert score is not None and score.value == 1.0


def test_falls_back_to_output_and_input_without_messages() -> None:
    score = measure(EvalCase(output="Your ticket is resolved."), resolved_patterns=["resolved"])
    assert score is not None and score.value == 1.0
    score = measure(EvalCase(output={"status": "resolved"}), resolved_patterns=['"status": "resolved"'])
    assert score is not None and score.value == 1.0  # structured output is matched as JSON text
    score = measure(EvalCase(input="thanks, that fixed it"), resolved_patterns=["fixed"], scope="last_user")
    assert score is not None and score.value == 1.0


@pytest.mark.parametrize(
    "case",
    [
        EvalCase(),
        EvalCase(output=""),
        EvalCase(messages=(Message("user", "hi"),)),  # no reply, no output
        EvalCase(messages=(Message("assistant", "hello"),), input=None),  # last_user below
    ],
)
def test_nothing_to_match_is_not_applicable(case: EvalCase) -> None:
    scope = "last_user" if case.messages and case.messages[0].role == "assistant" else "last_assistant"
    assert measure(case, resolved_patterns=["x"], scope=scope) is None


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"resolved_patterns": []},
        {"resolved_patterns": ["("]},
        {"unresolved_patterns": ["[a-"]},
        {"resolved_patterns": [""]},
        {"resolved_patterns": ["ok"], "scope": "all"},
        {"resolved_patterns": ["ok"], "case_sensitive": True},
    ],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ConversationResolutionMetric(options=options)


def test_an_invalid_regex_is_reported_with_its_error() -> None:
    with pytest.raises(ValidationError, match=r"invalid regular expression '\(': missing \)"):
        ConversationResolutionMetric(options={"resolved_patterns": ["("]})


def test_an_invalid_regex_is_a_config_error() -> None:
    from evald.config.loader import parse_config
    from evald.errors import ConfigError

    config = 'metrics:\n  - { kind: conversation_resolution, options: { resolved_patterns: ["ok", "(unclosed"] } }\n'
    with pytest.raises(ConfigError) as err:
        parse_config(config, "test", environ={})
    assert err.value.problems[0][0] == "metrics[0].options.resolved_patterns[1]"  # the bad item itself
    assert "invalid regular expression '(unclosed'" in err.value.problems[0][1]
