"""Capture [traceloop-langchain.no_content]: OpenLLMetry's opentelemetry-instrumentation-langchain with
TRACELOOP_TRACE_CONTENT=false, langchain-openai ChatOpenAI against the OpenAI stand-in (sdk_privacy_standin.py).

a/f: ChatPromptTemplate | ChatOpenAI | StrOutputParser; h: the same chain with .stream() (stream_usage=True);
c: a small agent (in an app span "weather_assistant"): langchain.agents.create_agent(ChatOpenAI, tools=[get_weather],
   system_prompt=...) (LangGraph).
Run inside the configuration's venv: python traceloop-langchain.no_content.py [--no-manifest]
"""

import os
import sys

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, Capture, start_standin  # noqa: E402
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_ANSWER, TOOL_SYSTEM, TOOL_USER, USER  # noqa: E402
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

CONFIG = "traceloop-langchain.no_content"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.langchain import LangchainInstrumentor  # noqa: E402

LangchainInstrumentor().instrument(tracer_provider=cap.tracer_provider)
from langchain.agents import create_agent  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

server, url = start_standin()
llm = ChatOpenAI(model="gpt-4o-mini", base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0,
                 stream_usage=True)
prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("user", "{question}")])
chain = prompt | llm | StrOutputParser()


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return _weather(city)


assert chain.invoke({"question": USER}) == ANSWER
cap.dump("a_chat_correct")

with cap.tracer().start_as_current_span("weather_assistant"):  # one trace: create_agent writes its own span
    agent = create_agent(llm, tools=[get_weather], system_prompt=TOOL_SYSTEM, name="weather_agent")
    state = agent.invoke({"messages": [{"role": "user", "content": TOOL_USER}]})
assert state["messages"][-1].content == TOOL_ANSWER, state["messages"][-1]
cap.dump("c_tool_call")

STATE.fail_next = True
try:
    chain.invoke({"question": ERROR_USER})
except Exception as exc:  # the app catches it
    print("f_error raised as expected:", type(exc).__name__)
else:
    raise SystemExit("f_error: the call did not raise")
cap.dump("f_error")

assert "".join(chain.stream({"question": USER})) == ANSWER
cap.dump("h_streaming_chat")
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "present",
        "tokens": "present", "finish_reason": "present", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE),
            "c_tool_call": {**NONE, "system_prompt": "present", "tool_names": "present"},
            "f_error": {**NONE, "tokens": "absent", "finish_reason": "absent", "response_id": "absent"},
            "h_streaming_chat": {**NONE, "response_id": "absent"}}
COMMON = ("Scope opentelemetry.instrumentation.langchain 0.62.4, no schema_url; all success statuses UNSET; no log "
          "records. Chain: 'RunnableSequence.workflow' (gen_ai.operation.name=invoke_agent, gen_ai.provider.name="
          "langchain) > 'execute_task ChatPromptTemplate', 'ChatOpenAI.chat' (CLIENT), 'execute_task "
          "StrOutputParser'. With TRACELOOP_TRACE_CONTENT=false there is no gen_ai.input.messages / "
          "gen_ai.output.messages / gen_ai.prompt.* / gen_ai.completion.* / traceloop.entity.input / "
          "traceloop.entity.output on any span.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": "Scope opentelemetry.instrumentation.langchain 0.62.4. Tree: app span 'weather_assistant' (scope "
                   "privacy.capture.app) > 'create_agent weather_agent' + 'invoke_agent weather_agent' "
                   "(gen_ai.provider.name=langgraph, gen_ai.workflow.nodes/edges) > 'weather_agent.workflow' > "
                   "'execute_task model' > 'ChatOpenAI.chat' (x2) and 'execute_task tools' > 'execute_tool "
                   "get_weather' (gen_ai.tool.name, gen_ai.tool.type=function, gen_ai.tool.description). CONTENT "
                   "LEAK despite TRACELOOP_TRACE_CONTENT=false: the 'create_agent weather_agent' span carries "
                   "gen_ai.system_instructions = the full system prompt (plain string) and gen_ai.tool.definitions; "
                   "both chat spans carry gen_ai.tool.definitions (JSON string). Without the app span create_agent "
                   "would be a separate one-span trace (it runs when the agent is built). User input, model output, "
                   "tool call id, arguments and result are not recorded. First chat span finish_reasons "
                   "['tool_call'] (semconv value), second ['stop'].",
    "f_error": COMMON + " 'ChatOpenAI.chat' and the workflow span: status ERROR 'Error code: 500 - The server had "
               "an error while processing your request.', error.type='OpenAIAPIError', gen_ai.task.status="
               "'failure', an 'exception' event (langchain_openai...OpenAIAPIError, stack trace with the capture "
               "machine's paths). gen_ai.response.model='gpt-4o-mini' is the REQUEST model copied (no response "
               "came); no usage, finish reason or response id.",
    "h_streaming_chat": COMMON + " .stream() with stream_usage=True: usage and finish_reasons ['stop'] recorded, "
                        "but gen_ai.response.model='gpt-4o-mini' (the request model, while the stream said "
                        "gpt-4o-mini-2024-07-18) and NO gen_ai.response.id; no streaming flag.",
}
SETTINGS = {"how privacy mode was set": "environment TRACELOOP_TRACE_CONTENT=false before "
                                        "LangchainInstrumentor().instrument(tracer_provider=...)",
            "is_library_default": False,
            "switch_to_capture_content": "TRACELOOP_TRACE_CONTENT=true (or unset: the default is 'true'); with the "
                                         "traceloop-sdk, Traceloop.init(trace_content=True)"}
write_capture_json2(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-langchain", "opentelemetry-semantic-conventions-ai", "langchain", "langchain-core",
     "langchain-openai", "langgraph", "openai", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-instrumentation", "opentelemetry-semantic-conventions", "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/traceloop-langchain.no_content.py")
