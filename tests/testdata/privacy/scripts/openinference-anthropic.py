"""Capture openinference-instrumentation-anthropic in a privacy mode (issue 15).

usage: python openinference-anthropic.py openinference-anthropic.hidden <outdir>
OPENINFERENCE_HIDE_INPUTS=true and OPENINFERENCE_HIDE_OUTPUTS=true before AnthropicInstrumentor().instrument();
the anthropic SDK's own OTel spans are switched off (Anthropic(open_telemetry=False)) so only the instrumentation
under test writes spans. c_tool_call: an app span 'agent run' around two messages.create calls and the tool run.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {"openinference-anthropic.hidden": {"OPENINFERENCE_HIDE_INPUTS": "true",
                                              "OPENINFERENCE_HIDE_OUTPUTS": "true"}}
configuration, outdir = sys.argv[1], sys.argv[2]
os.environ.update(CONFIGS[configuration])

import anthropic  # noqa: E402
from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from openinference.instrumentation.anthropic import AnthropicInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

MODEL = "claude-3-5-haiku-20241022"
SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
WEATHER_TOOL = {"name": "get_weather", "description": "Get the current weather for a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def get_weather(city: str) -> str:
    return "18C and sunny"


stand_in = StandIn().start()
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": f"privacy-{configuration}"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
AnthropicInstrumentor().instrument(tracer_provider=provider)
app_tracer = provider.get_tracer("privacy-capture-app")
client = anthropic.Anthropic(base_url=stand_in.base_url, api_key="sk-ant-test", max_retries=0, open_telemetry=False)


def a_chat_correct() -> None:
    r = client.messages.create(model=MODEL, max_tokens=256, system=SYSTEM,
                               messages=[{"role": "user", "content": "What is the capital of France?"}])
    print(r.content[0].text)


def c_tool_call() -> None:
    with app_tracer.start_as_current_span("agent run"):
        messages: list = [{"role": "user", "content": "What's the weather in Paris right now?"}]
        r = client.messages.create(model=MODEL, max_tokens=256, system=TOOL_SYSTEM, tools=[WEATHER_TOOL],
                                   messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in r.content]})
        results = []
        for block in r.content:
            if block.type == "tool_use":
                with app_tracer.start_as_current_span("execute_tool get_weather"):
                    results.append({"type": "tool_result", "tool_use_id": block.id,
                                    "content": get_weather(**block.input)})
        messages.append({"role": "user", "content": results})
        r = client.messages.create(model=MODEL, max_tokens=256, system=TOOL_SYSTEM, tools=[WEATHER_TOOL],
                                   messages=messages)
        print(r.content[0].text)


def f_error() -> None:
    try:
        client.messages.create(model=MODEL, max_tokens=256, system=SYSTEM,
                               messages=[{"role": "user", "content": "What is the status of order #12345?"}])
    except anthropic.APIError as e:
        print("caught", type(e).__name__)


def h_streaming_chat() -> None:
    with client.messages.stream(model=MODEL, max_tokens=256, system=SYSTEM,
                                messages=[{"role": "user", "content": "What is the capital of France?"}]) as stream:
        print("".join(stream.text_stream))


for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
    exporter.clear()
    scenario()
    provider.force_flush()
    dump(outdir, scenario.__name__, exporter.get_finished_spans())
stand_in.stop()
