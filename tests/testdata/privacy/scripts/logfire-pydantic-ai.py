"""Capture pydantic-ai instrumented through logfire, with logfire's default scrubbing on (issue 15).

usage: python logfire-pydantic-ai.py <configuration> <outdir>
  logfire-pydantic-ai.scrubbed    logfire.instrument_pydantic_ai()                       (content on, the default)
  logfire-pydantic-ai.no_content  logfire.instrument_pydantic_ai(include_content=False)  (logfire's content switch)
logfire.configure(send_to_logfire=False, console=False, service_name=..., additional_span_processors=[
SimpleSpanProcessor(InMemorySpanExporter())]) with default scrubbing; OpenAIChatModel('gpt-4o-mini') over
AsyncOpenAI(max_retries=0) against the stand-in. Every user text holds "My password is hunter2"; for plain chats the
stand-in's answer mentions the password and the api_key. Unlike logfire.openai/logfire.anthropic spans, pydantic-ai's
spans (scope 'pydantic-ai') go through logfire's scrubber.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import logfire  # noqa: E402
from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

configuration, outdir = sys.argv[1], sys.argv[2]
SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
SECRET_Q = "My password is hunter2, what is the capital of France?"

stand_in = StandIn().start()
exporter = InMemorySpanExporter()
logfire.configure(send_to_logfire=False, console=False, service_name=f"privacy-{configuration}",
                  additional_span_processors=[SimpleSpanProcessor(exporter)])
if configuration == "logfire-pydantic-ai.scrubbed":
    logfire.instrument_pydantic_ai()
elif configuration == "logfire-pydantic-ai.no_content":
    logfire.instrument_pydantic_ai(include_content=False)
else:
    raise SystemExit(f"unknown configuration {configuration}")

client = AsyncOpenAI(base_url=stand_in.base_url + "/v1", api_key="sk-test", max_retries=0)
model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=client))
chat_agent = Agent(model, system_prompt=SYSTEM)
tool_agent = Agent(model, system_prompt=TOOL_SYSTEM)


@tool_agent.tool_plain
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return "18C and sunny"


async def a_chat_correct() -> None:
    print((await chat_agent.run(SECRET_Q)).output)


async def c_tool_call() -> None:
    print((await tool_agent.run("My password is hunter2. What's the weather in Paris right now?")).output)


async def f_error() -> None:
    try:
        await chat_agent.run("My password is hunter2. What is the status of order #12345?")
    except Exception as e:  # pydantic_ai.exceptions.ModelHTTPError
        print("caught", type(e).__name__)


async def h_streaming_chat() -> None:
    async with chat_agent.run_stream(SECRET_Q) as result:
        print("".join([t async for t in result.stream_text(delta=True)]))


async def main() -> None:
    for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
        exporter.clear()
        await scenario()
        logfire.force_flush()
        dump(outdir, scenario.__name__, exporter.get_finished_spans())


asyncio.run(main())
stand_in.stop()
