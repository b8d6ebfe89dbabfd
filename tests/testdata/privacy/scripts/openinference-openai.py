"""Capture openinference-instrumentation-openai in a privacy mode (issue 15).

usage: python openinference-openai.py <configuration> <outdir>
  openinference-openai.hidden         OPENINFERENCE_HIDE_INPUTS=true, OPENINFERENCE_HIDE_OUTPUTS=true
  openinference-openai.hide_messages  OPENINFERENCE_HIDE_INPUT_MESSAGES=true, OPENINFERENCE_HIDE_OUTPUT_MESSAGES=true
  openinference-openai.hide_text      OPENINFERENCE_HIDE_INPUT_TEXT=true, OPENINFERENCE_HIDE_OUTPUT_TEXT=true
  openinference-openai.hidden_genai   .hidden + OPENINFERENCE_ENABLE_GENAI_SEMCONV=true (gen_ai.* attributes beside)
  openinference-openai.hide_text_genai  .hide_text + OPENINFERENCE_ENABLE_GENAI_SEMCONV=true
The switches are set as environment variables before the instrumentor is created (TraceConfig() reads them).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {
    "openinference-openai.hidden": {"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true"},
    "openinference-openai.hide_messages": {"OPENINFERENCE_HIDE_INPUT_MESSAGES": "true",
                                           "OPENINFERENCE_HIDE_OUTPUT_MESSAGES": "true"},
    "openinference-openai.hide_text": {"OPENINFERENCE_HIDE_INPUT_TEXT": "true",
                                       "OPENINFERENCE_HIDE_OUTPUT_TEXT": "true"},
    "openinference-openai.hidden_genai": {"OPENINFERENCE_HIDE_INPUTS": "true", "OPENINFERENCE_HIDE_OUTPUTS": "true",
                                          "OPENINFERENCE_ENABLE_GENAI_SEMCONV": "true"},
    "openinference-openai.hide_text_genai": {"OPENINFERENCE_HIDE_INPUT_TEXT": "true",
                                             "OPENINFERENCE_HIDE_OUTPUT_TEXT": "true",
                                             "OPENINFERENCE_ENABLE_GENAI_SEMCONV": "true"},
}
configuration, outdir = sys.argv[1], sys.argv[2]
os.environ.update(CONFIGS[configuration])

import openai  # noqa: E402
from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def get_weather(city: str) -> str:
    return "18C and sunny"


stand_in = StandIn().start()
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": f"privacy-{configuration}"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
OpenAIInstrumentor().instrument(tracer_provider=provider)
app_tracer = provider.get_tracer("privacy-capture-app")
client = openai.OpenAI(base_url=stand_in.base_url + "/v1", api_key="sk-test", max_retries=0)


def a_chat_correct() -> None:
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is the capital of France?"}])
    print(r.choices[0].message.content)


def c_tool_call() -> None:
    with app_tracer.start_as_current_span("agent run"):
        messages: list = [{"role": "system", "content": TOOL_SYSTEM},
                          {"role": "user", "content": "What's the weather in Paris right now?"}]
        r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
        msg = r.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        for call in msg.tool_calls or []:
            with app_tracer.start_as_current_span("execute_tool get_weather"):
                result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        r = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[WEATHER_TOOL])
        print(r.choices[0].message.content)


def f_error() -> None:
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is the status of order #12345?"}])
    except openai.APIError as e:
        print("caught", type(e).__name__)


def h_streaming_chat() -> None:
    stream = client.chat.completions.create(model="gpt-4o-mini", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "system", "content": SYSTEM},
                                                      {"role": "user", "content": "What is the capital of France?"}])
    print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))


for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
    exporter.clear()
    scenario()
    provider.force_flush()
    dump(outdir, scenario.__name__, exporter.get_finished_spans())
stand_in.stop()
