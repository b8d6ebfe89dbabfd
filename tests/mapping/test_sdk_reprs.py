"""evald.mapping.sdk_reprs: tool calls written as the Python repr of an OpenAI SDK object, and the text part
that carries one (opentelemetry-instrumentation-openai-agents-v2 0.1.0)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evald.case import Message, ToolCall
from evald.mapping.messages import parse_messages
from evald.mapping.sdk_reprs import repr_tool_call

RESPONSES_CALL = ("ResponseFunctionToolCall(arguments='{\"city\": \"Paris\"}', call_id='call_6f8d', "
                  "name='get_weather', type='function_call', id='fc_0000', async_=None, caller=None, "
                  "namespace=None, status='completed')")


def test_responses_function_call_repr() -> None:
    assert repr_tool_call(RESPONSES_CALL) == ToolCall("get_weather", {"city": "Paris"}, id="call_6f8d")


def test_chat_completions_tool_call_repr_with_quotes_inside() -> None:
    text = ("ChatCompletionMessageToolCall(id='call_1', function=Function(arguments='{\"q\": \"it\\'s\"}', "
            "name='search'), type='function')")
    assert repr_tool_call(text) == ToolCall("search", {"q": "it's"}, id="call_1")


@pytest.mark.parametrize("text", [
    "The capital of France is Paris.",
    "ResponseFunctionToolCall(arguments='{}', call_id='c')",  # no name
    "ResponseFunctionToolCall(name=get_weather)",  # not a string literal
    "ResponseFunctionToolCall(name='x'",  # cut off
    "Some prose that mentions ResponseFunctionToolCall(name='x')",
])
def test_other_text_is_not_a_call(text: str) -> None:
    assert repr_tool_call(text) is None


def test_a_text_part_holding_a_call_repr_is_the_call_not_the_answer() -> None:
    output = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": RESPONSES_CALL}]}])
    assert parse_messages(output, "assistant") == [
        Message("assistant", None, (ToolCall("get_weather", {"city": "Paris"}, id="call_6f8d"),))]


@given(st.text(max_size=300))
def test_never_raises(tail: str) -> None:
    for head in ("ResponseFunctionToolCall(", "ChatCompletionMessageToolCall(", ""):
        repr_tool_call(head + tail)
        repr_tool_call(head + tail + ")")
