"""Capture logfire.instrument_openai with logfire's default scrubbing on, on content that triggers it (issue 15).

usage: python logfire-openai.py logfire-openai.scrubbed <outdir>
logfire.configure(send_to_logfire=False, console=False, service_name=..., additional_span_processors=[
SimpleSpanProcessor(InMemorySpanExporter())]) with the default scrubbing (no `scrubbing=` argument), then
logfire.instrument_openai(client) (default version=2). Every scenario's user text holds "My password is hunter2";
for plain chats the stand-in's answer mentions the password and the api_key.
Finding: logfire 5.4.0's Scrubber.scrub_span returns early for the scopes 'logfire.openai' and 'logfire.anthropic',
so the LLM spans keep the text; only the app's own logfire.span attributes are scrubbed.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import logfire  # noqa: E402
import openai  # noqa: E402
from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

configuration, outdir = sys.argv[1], sys.argv[2]
assert configuration == "logfire-openai.scrubbed"
SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
SECRET_Q = "My password is hunter2, what is the capital of France?"
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def get_weather(city: str) -> str:
    return "18C and sunny"


stand_in = StandIn().start()
exporter = InMemorySpanExporter()
logfire.configure(send_to_logfire=False, console=False, service_name=f"privacy-{configuration}",
                  additional_span_processors=[SimpleSpanProcessor(exporter)])
client = openai.OpenAI(base_url=stand_in.base_url + "/v1", api_key="sk-test", max_retries=0)
logfire.instrument_openai(client)


def a_chat_correct() -> None:
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": SECRET_Q}])
    print(r.choices[0].message.content)


def c_tool_call() -> None:
    question = "My password is hunter2. What's the weather in Paris right now?"
    # the app span carries the question as an attribute (as apps commonly do): logfire scrubs app spans,
    # but not the spans of its own openai/anthropic integrations
    with logfire.span("agent run {question}", question=question):
        messages: list = [{"role": "system", "content": TOOL_SYSTEM}, {"role": "user", "content": question}]
        r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
        msg = r.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        for call in msg.tool_calls or []:
            with logfire.span("execute_tool get_weather"):
                result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
        print(r.choices[0].message.content)


def f_error() -> None:
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "My password is hunter2. What is the status of order #12345?"}])
    except openai.APIError as e:
        print("caught", type(e).__name__)


def h_streaming_chat() -> None:
    stream = client.chat.completions.create(model="gpt-4o-mini", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "system", "content": SYSTEM},
                                                      {"role": "user", "content": SECRET_Q}])
    print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))


for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
    exporter.clear()
    scenario()
    logfire.force_flush()
    dump(outdir, scenario.__name__, exporter.get_finished_spans())
stand_in.stop()
