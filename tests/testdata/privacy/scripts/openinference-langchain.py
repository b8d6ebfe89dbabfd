"""Capture openinference-instrumentation-langchain in a privacy mode (issue 15).

usage: python openinference-langchain.py <configuration> <outdir>
  openinference-langchain.hidden     OPENINFERENCE_HIDE_INPUTS=true, OPENINFERENCE_HIDE_OUTPUTS=true
  openinference-langchain.hide_text  OPENINFERENCE_HIDE_INPUT_TEXT=true, OPENINFERENCE_HIDE_OUTPUT_TEXT=true
LangChain + langchain-openai ChatOpenAI against the local stand-in, OPENINFERENCE_HIDE_INPUTS=true and
OPENINFERENCE_HIDE_OUTPUTS=true set before LangChainInstrumentor().instrument(). c_tool_call is a LangChain v1 agent
(langchain.agents.create_agent) with a get_weather tool.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CONFIGS = {"openinference-langchain.hidden": {"OPENINFERENCE_HIDE_INPUTS": "true",
                                              "OPENINFERENCE_HIDE_OUTPUTS": "true"},
           "openinference-langchain.hide_text": {"OPENINFERENCE_HIDE_INPUT_TEXT": "true",
                                                 "OPENINFERENCE_HIDE_OUTPUT_TEXT": "true"}}
configuration, outdir = sys.argv[1], sys.argv[2]
os.environ.update(CONFIGS[configuration])

from langchain.agents import create_agent  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from oi_pai_logfire_standin import StandIn, dump  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return "18C and sunny"


stand_in = StandIn().start()
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": f"privacy-{configuration}"}))
provider.add_span_processor(SimpleSpanProcessor(exporter))
LangChainInstrumentor().instrument(tracer_provider=provider)
llm = ChatOpenAI(model="gpt-4o-mini", base_url=stand_in.base_url + "/v1", api_key="sk-test", max_retries=0,
                 stream_usage=True)
prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])
chain = prompt | llm


def a_chat_correct() -> None:
    print(chain.invoke({"question": "What is the capital of France?"}).content)


def c_tool_call() -> None:
    agent = create_agent(llm, tools=[get_weather], system_prompt=TOOL_SYSTEM)
    out = agent.invoke({"messages": [{"role": "user", "content": "What's the weather in Paris right now?"}]})
    print(out["messages"][-1].content)


def f_error() -> None:
    try:
        chain.invoke({"question": "What is the status of order #12345?"})
    except Exception as e:  # openai.InternalServerError
        print("caught", type(e).__name__)


def h_streaming_chat() -> None:
    print("".join(str(c.content) for c in chain.stream({"question": "What is the capital of France?"})))


for scenario in (a_chat_correct, c_tool_call, f_error, h_streaming_chat):
    exporter.clear()
    scenario()
    provider.force_flush()
    dump(outdir, scenario.__name__, exporter.get_finished_spans())
stand_in.stop()
