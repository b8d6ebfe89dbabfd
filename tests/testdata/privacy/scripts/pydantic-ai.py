"""Capture pydantic-ai's own instrumentation with include_content=False (issue 15).

usage: python pydantic-ai.py <configuration> <outdir>
  pydantic-ai-openai.no_content     OpenAIChatModel('gpt-4o-mini') over AsyncOpenAI(max_retries=0)
  pydantic-ai-anthropic.no_content  AnthropicModel('claude-3-5-haiku-20241022') over AsyncAnthropic(max_retries=0,
                                    open_telemetry=False: the anthropic SDK's own spans are off, so only
                                    pydantic-ai's spans are captured)
Agent.instrument_all(InstrumentationSettings(tracer_provider=..., include_content=False)), the default data format
version; c_tool_call is an agent with a get_weather tool.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic_ai import Agent, InstrumentationSettings  # noqa: E402

SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
configuration, outdir = sys.argv[1], sys.argv[2]

stand_in = StandIn().start()
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": f"privacy-{configuration}"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
settings = InstrumentationSettings(tracer_provider=provider, include_content=False)


def make_model():  # type: ignore[no-untyped-def]
    if configuration == "pydantic-ai-openai.no_content":
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(base_url=stand_in.base_url + "/v1", api_key="sk-test", max_retries=0)
        return OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
    if configuration == "pydantic-ai-anthropic.no_content":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        aclient = AsyncAnthropic(base_url=stand_in.base_url, api_key="sk-ant-test", max_retries=0,
                                 open_telemetry=False)
        return AnthropicModel("claude-3-5-haiku-20241022", provider=AnthropicProvider(anthropic_client=aclient))
    raise SystemExit(f"unknown configuration {configuration}")


model = make_model()
# Agent(instrument=...) is gone in this version; capabilities=[Instrumentation(...)] is the per-agent form
Agent.instrument_all(settings)
chat_agent = Agent(model, system_prompt=SYSTEM)
tool_agent = Agent(model, system_prompt=TOOL_SYSTEM)


@tool_agent.tool_plain
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return "18C and sunny"


async def a_chat_correct() -> None:
    print((await chat_agent.run("What is the capital of France?")).output)


async def c_tool_call() -> None:
    print((await tool_agent.run("What's the weather in Paris right now?")).output)


async def f_error() -> None:
    try:
        await chat_agent.run("What is the status of order #12345?")
    except Exception as e:  # pydantic_ai.exceptions.ModelHTTPError
        print("caught", type(e).__name__, e)


async def h_streaming_chat() -> None:
    async with chat_agent.run_stream("What is the capital of France?") as result:
        print("".join([t async for t in result.stream_text(delta=True)]))


async def main() -> None:
    for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
        exporter.clear()
        await scenario()
        provider.force_flush()
        dump(outdir, scenario.__name__, exporter.get_finished_spans())


asyncio.run(main())
stand_in.stop()
