"""evald.mapping.case_parts: the ToolLedger (tool calls merged across a trace's model calls and tool responses)
and tool results."""

from __future__ import annotations

import pytest

from evald.case import Message, ToolCall
from evald.mapping.case_parts import ToolLedger, tool_result

ASK = Message("user", "Weather in Paris and Rome?")


def paris_and_rome(first: str, second: str) -> tuple[ToolLedger, Message]:
    """A ledger after a model call that requested two calls with these ids, and the message that requested them."""
    calls = (ToolCall("weather", {"city": "Paris"}, id=first), ToolCall("weather", {"city": "Rome"}, id=second))
    ledger = ToolLedger()
    ledger.add_call([ASK], calls)
    return ledger, Message("assistant", None, calls)


def test_responses_complete_their_calls_by_id() -> None:
    ledger, requested = paris_and_rome("c1", "c2")
    ledger.add_call([ASK, requested, Message("tool", "rain", tool_call_id="c2"),
                     Message("tool", "sun", tool_call_id="c1")], [])
    assert [(c.id, c.result) for c in ledger.calls.values()] == [("c1", "sun"), ("c2", "rain")]


def test_responses_whose_ids_do_not_line_up_answer_the_requested_calls_in_order() -> None:
    # OpenLLMetry's Responses API spans: the call carries the item id (fc_...), its result the call id (call_...)
    ledger, requested = paris_and_rome("fc_1", "fc_2")
    ledger.add_call([ASK, requested, Message("tool", '{"sky": "sun"}', tool_call_id="call_a"),
                     Message("tool", "rain", tool_call_id="call_b")], [])
    assert [(c.id, c.result) for c in ledger.calls.values()] == [("fc_1", {"sky": "sun"}), ("fc_2", "rain")]


def test_a_response_to_no_requested_call_is_dropped() -> None:
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}, id="c1")])
    answered = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}, id="c1"),))
    ledger.add_call([ASK, answered, Message("tool", "sun", tool_call_id="c1"),
                     Message("tool", "stray", tool_call_id="c9")], [])
    assert [(c.id, c.result) for c in ledger.calls.values()] == [("c1", "sun")]


def test_a_response_with_neither_id_nor_name_answers_the_next_requested_call() -> None:
    # OpenInference LiteLLM: the tool message carries no tool_call_id
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}, id="c1")])
    requested = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}, id="c1"),))
    ledger.add_call([ASK, requested, Message("tool", "sun")], [])
    assert [(c.id, c.result) for c in ledger.calls.values()] == [("c1", "sun")]


def test_an_id_less_response_completes_the_open_call_of_its_name() -> None:
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}), ToolCall("time", {})])
    ledger.add_call([ASK, Message("tool", "noon", name="time")], [])
    assert [(c.name, c.result) for c in ledger.calls.values()] == [("weather", None), ("time", "noon")]


@pytest.mark.parametrize(("content", "expected"), [
    ('[{"text": "{\\"temp\\": 18}"}]', {"temp": 18}),  # Strands / Bedrock content blocks
    ([{"type": "text", "text": "sunny"}, {"type": "text", "text": "warm"}], "sunny\nwarm"),  # Anthropic
    ([{"text": "a", "score": 1}], [{"text": "a", "score": 1}]),  # records with more fields stay data
    ([{"json": {"temp": 18}}], {"temp": 18}),  # a Bedrock Converse toolResult block
    (b"sunny", "sunny"),  # a bytes AnyValue
    ([], []),
])
def test_tool_results_in_text_content_blocks_are_their_text(content: object, expected: object) -> None:
    assert tool_result(content) == expected


def test_a_call_first_seen_without_its_id_is_completed_when_the_id_appears() -> None:
    # LiteLLM's OTel callback: the requested call has no id; the next call's history carries it with the id
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"})])
    requested = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}, id="c1"),))
    ledger.add_call([ASK, requested, Message("tool", "sun", tool_call_id="c1")], [])
    assert list(ledger.calls.values()) == [ToolCall("weather", {"city": "Paris"}, "sun", "c1")]


def test_an_id_less_response_answers_an_id_less_call_in_order() -> None:
    # openinference-instrumentation-openai 0.1.14 records neither call ids nor tool_call_id
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"})])
    requested = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}),))
    ledger.add_call([ASK, requested, Message("tool", "sun")], [])
    assert list(ledger.calls.values()) == [ToolCall("weather", {"city": "Paris"}, "sun")]


def test_a_tool_span_whose_id_matches_no_call_completes_the_same_call() -> None:
    # Google ADK: the model's call is get_weather_0, the tool span's own id adk-<uuid>
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}, id="get_weather_0")])
    ledger.add_executed(ToolCall("weather", {"city": "Paris"}, {"temp": 18}, id="adk-1f2e"))
    ledger.add_executed(ToolCall("weather", {"city": "Rome"}, "rain", id="adk-9a8b"))  # another call: appended
    assert list(ledger.calls.values()) == [ToolCall("weather", {"city": "Paris"}, {"temp": 18}, "get_weather_0"),
                                           ToolCall("weather", {"city": "Rome"}, "rain", "adk-9a8b")]
