"""evald.mapping.case_parts.ToolLedger: tool calls merged across a trace's model calls and tool responses."""

from __future__ import annotations

from evald.case import Message, ToolCall
from evald.mapping.case_parts import ToolLedger

ASK = Message("user", "Weather in Paris and Rome?")


def test_responses_complete_their_calls_by_id() -> None:
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}, id="c1"), ToolCall("weather", {"city": "Rome"},
                                                                                       id="c2")])
    requested = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}, id="c1"),
                                            ToolCall("weather", {"city": "Rome"}, id="c2")))
    ledger.add_call([ASK, requested, Message("tool", "rain", tool_call_id="c2"),
                     Message("tool", "sun", tool_call_id="c1")], [])
    assert [(c.id, c.result) for c in ledger.calls.values()] == [("c1", "sun"), ("c2", "rain")]


def test_responses_whose_ids_do_not_line_up_answer_the_requested_calls_in_order() -> None:
    # OpenLLMetry's Responses API spans: the call carries the item id (fc_...), its result the call id (call_...)
    ledger = ToolLedger()
    ledger.add_call([ASK], [ToolCall("weather", {"city": "Paris"}, id="fc_1"), ToolCall("weather", {"city": "Rome"},
                                                                                         id="fc_2")])
    requested = Message("assistant", None, (ToolCall("weather", {"city": "Paris"}, id="fc_1"),
                                            ToolCall("weather", {"city": "Rome"}, id="fc_2")))
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
