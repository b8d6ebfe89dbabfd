"""Every GenAI message shape evald parses: typed parts, per-message events, legacy prompt strings."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evald.case import Message, ToolCall
from evald.mapping.messages import (
    call_content,
    event_payload,
    message_from_dict,
    parse_indexed,
    parse_message_events,
    parse_messages,
    parse_system_instructions,
    text_of,
)
from evald.model import SpanEvent
from evald.testing import log, span

TRACE = "0af7651916cd43dd8448eb211c80319c"

TOOL_LOOP = [
    {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                     "arguments": {"location": "Paris"}}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rainy, 57°F"}]},
]


def test_parts_shape_structured_and_json_string_agree() -> None:
    structured = parse_messages(TOOL_LOOP)
    assert parse_messages(json.dumps(TOOL_LOOP)) == structured
    assert structured == [
        Message("system", "Be brief."),
        Message("user", "Weather in Paris?"),
        Message("assistant", None, (ToolCall("get_weather", {"location": "Paris"}, id="call_1"),)),
        Message("tool", "rainy, 57°F", tool_call_id="call_1"),
    ]


def test_tool_call_arguments_as_json_string_and_result_key() -> None:
    messages = parse_messages([
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "f", "arguments": '{"x": 1}'}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "result": {"ok": True}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "d", "response": "plain"}]},
    ])
    assert messages[0].tool_calls == (ToolCall("f", {"x": 1}, id="c"),)
    assert messages[1] == Message("tool", '{"ok": true}', tool_call_id="c")
    assert messages[2] == Message("tool", "plain", tool_call_id="d")


def test_output_messages_text_reasoning_and_unknown_parts() -> None:
    out = parse_messages(json.dumps([{
        "role": "assistant", "finish_reason": "stop",
        "parts": [{"type": "reasoning", "content": "thinking..."}, {"type": "text", "content": "18\\u00b0C"},
                  {"type": "uri", "modality": "image", "uri": "https://x"}, {"type": "weird"}, 7, None],
    }]), "assistant")
    assert out == [Message("assistant", "18°C")]


def test_multiple_text_parts_are_joined_and_tool_responses_split() -> None:
    out = message_from_dict({"role": "user", "parts": [
        {"type": "text", "content": "a"}, {"type": "text", "content": "b"},
        {"type": "tool_call_response", "id": "1", "response": "r1"},
        {"type": "tool_call_response", "id": "2", "response": {"v": 2}},
    ]})
    assert out == [Message("user", "a\nb"), Message("tool", "r1", tool_call_id="1"),
                   Message("tool", '{"v": 2}', tool_call_id="2")]


def test_openai_style_messages() -> None:
    out = parse_messages([
        {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "image_url", "image_url": {}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": '{"hits": 1}'},
    ])
    assert out[0] == Message("user", "hello")
    assert out[1].tool_calls == (ToolCall("lookup", {"q": "x"}, id="call_9"),)
    assert out[2] == Message("tool", '{"hits": 1}', tool_call_id="call_9")


def test_content_that_merely_looks_like_json_stays_text() -> None:
    assert parse_messages([{"role": "user", "content": '{"a": 1}'}]) == [Message("user", '{"a": 1}')]
    assert parse_messages([{"role": "user", "content": "[1, 2]"}]) == [Message("user", "[1, 2]")]


def test_system_instructions() -> None:
    assert parse_system_instructions('[{"type": "text", "content": "You translate."}]') == "You translate."
    assert parse_system_instructions([{"type": "text", "content": "a"}, {"type": "text", "content": "b"}]) == "a\nb"
    assert parse_system_instructions("Just text.") == "Just text."
    assert parse_system_instructions([{"role": "system", "content": "old style"}]) == "old style"
    assert parse_system_instructions(None) is None
    assert parse_system_instructions(12) is None


def test_python_repr_gen_ai_prompt() -> None:
    prompt = "[{'role': 'system', 'content': 'Be nice.'}, {'role': 'user', 'content': 'What is 2+2?'}]"
    assert parse_messages(prompt) == [Message("system", "Be nice."), Message("user", "What is 2+2?")]
    assert parse_messages("Tell me a joke") == [Message("user", "Tell me a joke")]
    assert parse_messages('[{"role": "assistant", "content": "4"}]', "assistant") == [Message("assistant", "4")]
    assert parse_messages("[{'broken'", "assistant") == []  # truncated structure is not text
    assert parse_messages('[{"role": "user", "parts": [{"type": "te') == []
    assert parse_messages("[INST] Hi [/INST]") == [Message("user", "[INST] Hi [/INST]")]
    assert parse_messages("") == []


def test_per_message_events() -> None:
    events = [
        ("gen_ai.system.message", {"content": "Be brief.", "gen_ai.system": "openai"}),
        ("gen_ai.user.message", {"content": "Weather?"}),
        ("gen_ai.assistant.message", {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}),
        ("gen_ai.tool.message", {"content": "sunny", "id": "c1"}),
        ("gen_ai.choice", {"index": 1, "finish_reason": "stop", "message": {"content": "second"}}),
        ("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "first"}}),
        ("unrelated", {"content": "ignored"}),
    ]
    inputs, outputs = parse_message_events(events)
    assert inputs == [
        Message("system", "Be brief."), Message("user", "Weather?"),
        Message("assistant", None, (ToolCall("get_weather", {"city": "Paris"}, id="c1"),)),
        Message("tool", "sunny", tool_call_id="c1"),
    ]
    assert [m.content for m in outputs] == ["first", "second"]


def test_choice_event_with_tool_calls_top_level_or_in_message() -> None:
    call = {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    _, top = parse_message_events([("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls",
                                                      "message": {"role": "assistant"}, "tool_calls": [call]})])
    _, inner = parse_message_events([("gen_ai.choice", {"message": json.dumps({"tool_calls": [call]})})])
    assert top[0].tool_calls == inner[0].tool_calls == (ToolCall("f", {}, id="c2"),)


def test_event_payload_merges_body_over_attributes() -> None:
    assert event_payload({"gen_ai.system": "openai"}, {"content": "hi"}) == {"gen_ai.system": "openai", "content": "hi"}
    assert event_payload({}, "text body") == {"content": "text body"}
    assert event_payload({"a": 1}, None) == {"a": 1}


def test_indexed_openllmetry_attributes() -> None:
    attrs: dict[str, Any] = {
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Weather?",
        "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.id": "c1",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather", "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "P"}',
        "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": "sunny", "gen_ai.prompt.2.tool_call_id": "c1",
        "gen_ai.prompt.x.role": "garbage", "gen_ai.prompt": "not indexed",
    }
    assert parse_indexed(attrs, "gen_ai.prompt.", "user") == [
        Message("user", "Weather?"),
        Message("assistant", None, (ToolCall("get_weather", {"city": "P"}, id="c1"),)),
        Message("tool", "sunny", tool_call_id="c1"),
    ]


def test_call_content_prefers_span_attributes_then_logs_then_events() -> None:
    on_span = span(attributes={"gen_ai.input.messages": json.dumps(TOOL_LOOP[:2]),
                               "gen_ai.system_instructions": '[{"type": "text", "content": "Instr."}]'})
    content = call_content(on_span)
    assert text_of(content.input, frozenset({"user"})) == "Weather in Paris?"
    assert content.system == "Instr."

    bare = span(span_id="00000000000000aa")
    details = log(TRACE, "00000000000000aa", "gen_ai.client.inference.operation.details", body={
        "gen_ai.input.messages": TOOL_LOOP[:2],
        "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "Rainy."}],
                                    "finish_reason": "stop"}]})
    content = call_content(bare, [details])
    assert content.system == "Be brief."  # from the system message when no system_instructions
    assert text_of(content.output) == "Rainy."
    assert content.finish_reasons == ("stop",)

    legacy_logs = [log(TRACE, "00000000000000aa", "gen_ai.user.message", body={"content": "Q?"}),
                   log(TRACE, "00000000000000aa", "", {"event.name": "gen_ai.choice"},
                       body={"index": 0, "finish_reason": "length", "message": {"content": "A."}})]
    content = call_content(bare, legacy_logs)
    assert (content.input, text_of(content.output), content.finish_reasons) == ((Message("user", "Q?"),), "A.",
                                                                                 ("length",))


def test_call_content_from_span_events_and_legacy_strings() -> None:
    evented = replace(span(attributes={"gen_ai.system": "openai"}), events=(
        SpanEvent("gen_ai.content.prompt", 1, {"gen_ai.prompt": "[{'role': 'user', 'content': 'Hi'}]"}),
        SpanEvent("gen_ai.content.completion", 2, {"gen_ai.completion": "[{'role': 'assistant', 'content': 'Yo'}]"}),
    ))
    content = call_content(evented)
    assert (content.input, content.output) == ((Message("user", "Hi"),), (Message("assistant", "Yo"),))
    details = replace(span(), events=(SpanEvent("gen_ai.client.inference.operation.details", 1, {
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "On an event"}]}]}),))
    assert call_content(details).input == (Message("user", "On an event"),)
    strings = span(attributes={"gen_ai.prompt": "Plain prompt", "gen_ai.completion": "Plain answer"})
    content = call_content(strings)
    assert content.input == (Message("user", "Plain prompt"),)
    assert content.output == (Message("assistant", "Plain answer"),)


garbage = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "parts", "content", "type", "id", "name", "arguments", "response", "result",
                         "tool_calls", "function", "message", "index", "text"]) | st.text(max_size=4),
        inner, max_size=5),
    max_leaves=25,
)


@given(garbage)
def test_parsers_never_raise(value: Any) -> None:
    parse_messages(value)
    parse_messages(json.dumps(value, default=str) if not isinstance(value, str) else value)
    parse_system_instructions(value)
    if isinstance(value, dict):
        message_from_dict(value)
        parse_message_events([("gen_ai.choice", value), ("gen_ai.assistant.message", value)])


def test_json_encoded_empty_content_is_no_content() -> None:
    # OpenLLMetry 0.47 (LangChain) writes gen_ai.completion.0.content='""' on a tool-call turn
    (message,) = parse_messages([{"role": "assistant", "content": '""'}])
    assert message == Message("assistant", None)


def test_text_of_drops_surrounding_whitespace() -> None:
    # Strands ends its agent output with a newline
    messages = [Message("user", "  Hi?\n"), Message("assistant", "Hello.\n"), Message("assistant", " \n")]
    assert (text_of(messages, frozenset({"user"})), text_of(messages, frozenset({"assistant"}), last=True)) == (
        "Hi?", "Hello.")


def test_empty_output_messages_give_way_to_the_indexed_completion() -> None:
    # LiteLLM's OTel callback: gen_ai.output.messages has an empty assistant message, the call is indexed only
    record = span(attributes={
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": "Weather?"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]),
        "gen_ai.completion.0.tool_calls.0.name": "get_weather",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}'})
    content = call_content(record)
    assert [m.tool_calls for m in content.output] == [(ToolCall("get_weather", {"city": "Paris"}),)]


def test_a_user_message_answering_a_tool_call_is_a_tool_response() -> None:
    # OpenInference Bedrock (InvokeModel): the tool result is a user message with a tool_call_id
    (message,) = message_from_dict({"role": "user", "content": '{"temp": 18}', "tool_call_id": "tooluse_1"})
    assert message == Message("tool", '{"temp": 18}', tool_call_id="tooluse_1")
