from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Message, Score
from evald.metrics.conversation.turn_count import TurnCountMetric


def chat(user_turns: int, *, system: bool = True, tool: bool = False) -> tuple[Message, ...]:
    messages = [Message("system", "You are a helpful agent.")] if system else []
    for i in range(user_turns):
        messages.append(Message("user", f"question {i}"))
        if tool:
            messages.append(Message("tool", "42", tool_call_id=f"c{i}"))
        messages.append(Message("assistant", f"answer {i}"))
    return tuple(messages)


def measure(messages: tuple[Message, ...], **options: Any) -> Score | None:
    return TurnCountMetric(options=options).measure(EvalCase(messages=messages))


def test_within_the_default_budget_passes_and_counts_every_role() -> None:
    score = measure(chat(3, tool=True))
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "3 user turn(s), within <= 10"
    assert score.metadata == {
        "user_turns": 3, "assistant_messages": 3, "system_messages": 1, "tool_messages": 3, "total_messages": 10,
        "max_turns": 10, "min_turns": None,
    }


def test_above_max_is_graded_down() -> None:
    score = measure(chat(15))
    # 15 user turns against the default budget of 10: 10 / 15 = 0.6667
    assert score is not None and score.value == pytest.approx(10 / 15) and not score.passed
    assert score.reason == "15 user turn(s), more than the maximum of 10"
    score = measure(chat(4), max_turns=3)
    assert score is not None and score.value == pytest.approx(0.75)  # 3 / 4


def test_below_min_is_graded_down() -> None:
    score = measure(chat(1), min_turns=4)
    # 1 turn against a minimum of 4: 1 / 4 = 0.25
    assert score is not None and score.value == 0.25 and not score.passed
    assert score.reason == "1 user turn(s), fewer than the minimum of 4"


def test_bounds_are_inclusive() -> None:
    for turns in (2, 3, 4):
        score = measure(chat(turns), min_turns=2, max_turns=4)
        assert score is not None and score.value == 1.0, turns
    score = measure(chat(2), min_turns=2, max_turns=4)
    assert score is not None and score.reason == "2 user turn(s), within 2..4"


def test_only_user_messages_are_turns() -> None:
    messages = (
        Message("system", "rules"), Message("developer", "more rules"), Message("user", "hi"),
        Message("assistant", None, tool_calls=()), Message("tool", "result"), Message("assistant", "hello"),
    )
    score = measure(messages, max_turns=1)
    assert score is not None and score.value == 1.0
    assert score.metadata["user_turns"] == 1 and score.metadata["system_messages"] == 2


def test_roles_are_case_insensitive_and_langchain_names_count() -> None:
    messages = (Message("Human", "hi"), Message("AI", "hello"), Message("USER", "bye"))
    score = measure(messages, max_turns=1)
    assert score is not None and score.value == 0.5  # 2 turns against 1: 1 / 2
    assert score.metadata["assistant_messages"] == 1


def test_no_user_message_is_zero_turns() -> None:
    messages = (Message("system", "rules"), Message("assistant", "hello"))
    score = measure(messages)
    assert score is not None and score.value == 1.0 and score.metadata["user_turns"] == 0
    score = measure(messages, min_turns=1)
    assert score is not None and score.value == 0.0  # 0 / 1


def test_no_messages_is_not_applicable() -> None:
    assert measure(()) is None
    assert TurnCountMetric().measure(EvalCase(input="hi", output="hello")) is None


@pytest.mark.parametrize(
    "options", [{"max_turns": 0}, {"min_turns": -1}, {"min_turns": 5, "max_turns": 4}, {"max": 3}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TurnCountMetric(options=options)
