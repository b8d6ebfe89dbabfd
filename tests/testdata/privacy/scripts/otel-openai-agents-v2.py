"""Capture the official opentelemetry-instrumentation-openai-agents-v2 around the OpenAI Agents SDK (Runner.run /
Runner.run_streamed, Responses API) against the Responses stand-in in batch2_standin.py, in two privacy modes:

- [otel-openai-agents-v2.no_content]: the instrumentation's switch OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
  NO_CONTENT (this instrumentation's default is SPAN_AND_EVENT, i.e. content ON);
- [otel-openai-agents-v2.sdk_sensitive_off]: the Agents SDK's own switch OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=
  false (RunConfig.trace_include_sensitive_data), the instrumentation in its defaults.

Run inside the configuration's venv: python otel-openai-agents-v2.py [<configuration>] [--no-manifest]
"""

import asyncio
import os
import sys

CONFIGS = ("otel-openai-agents-v2.no_content", "otel-openai-agents-v2.sdk_sensitive_off")
CONFIG = next((a for a in sys.argv[1:] if not a.startswith("--")), CONFIGS[0])
assert CONFIG in CONFIGS, CONFIG
if CONFIG.endswith(".no_content"):
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "NO_CONTENT"
    os.environ.pop("OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA", None)
else:
    os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
    os.environ["OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA"] = "false"
os.environ.pop("OTEL_INSTRUMENTATION_OPENAI_AGENTS_CAPTURE_CONTENT", None)
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "0"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, Capture, start_standin  # noqa: E402
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_SYSTEM, TOOL_USER, USER  # noqa: E402
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
from agents import (  # noqa: E402
    Agent,
    Runner,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    set_trace_processors,
)
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

server, url = start_standin()
set_default_openai_client(AsyncOpenAI(base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0),
                          use_for_tracing=False)
set_default_openai_api("responses")
set_trace_processors([])  # no export to the OpenAI tracing backend; the instrumentation adds its own processor
OpenAIAgentsInstrumentor().instrument(tracer_provider=cap.tracer_provider)


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return _weather(city)


async def main() -> None:
    assistant = Agent(name="Assistant", instructions=SYSTEM, model="gpt-4o-mini")
    result = await Runner.run(assistant, USER)
    assert result.final_output == ANSWER, result.final_output
    cap.dump("a_chat_correct")

    weather = Agent(name="Weather assistant", instructions=TOOL_SYSTEM, model="gpt-4o-mini", tools=[get_weather])
    result = await Runner.run(weather, TOOL_USER)
    assert result.final_output == "It is 18C and sunny in Paris.", result.final_output
    cap.dump("c_tool_call")

    STATE.fail_next = True
    try:
        await Runner.run(assistant, ERROR_USER)
    except Exception as exc:  # the app catches it
        print("f_error raised as expected:", type(exc).__name__)
    else:
        raise SystemExit("f_error: the call did not raise")
    cap.dump("f_error")

    streamed = Runner.run_streamed(assistant, USER)
    async for _event in streamed.stream_events():
        pass
    assert streamed.final_output == ANSWER, streamed.final_output
    cap.dump("h_streaming_chat")


asyncio.run(main())
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if "--no-manifest" in sys.argv:
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "present",
        "tokens": "present", "finish_reason": "absent", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE), "c_tool_call": {**NONE, "tool_names": "present"},
            "h_streaming_chat": dict(NONE),
            "f_error": {**NONE, "request_model": "absent", "response_model": "absent", "tokens": "absent",
                        "response_id": "absent"}}
COMMON = ("Scope opentelemetry.instrumentation.openai_agents (no version), schema 1.28.0; tree 'Agent workflow' "
          "(SERVER, gen_ai.operation.name=invoke_agent) > 'unknown' (INTERNAL, gen_ai.operation.name='unknown': an "
          "Agents SDK span type this 0.1.0 processor does not map) > 'invoke_agent <agent name>' (CLIENT) > "
          "'unknown' > 'chat gpt-4o-mini-2024-07-18' (CLIENT). Every span carries gen_ai.agent.name='OpenAI Agent', "
          "gen_ai.agent.id='agent', gen_ai.agent.description='OpenAI Agents instrumentation' (instrumentor defaults; "
          "only the invoke_agent span has the real agent name) and server.address='api.openai.com', "
          "server.port=443 although the client talked to 127.0.0.1. The chat span's gen_ai.request.model holds the "
          "RESPONSE model 'gpt-4o-mini-2024-07-18' (the agent asked for 'gpt-4o-mini'); no "
          "gen_ai.response.finish_reasons anywhere; status explicitly OK. With NO_CONTENT there is no "
          "gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions / gen_ai.tool.definitions "
          "and no log records.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Two chat spans and 'execute_tool get_weather' (gen_ai.tool.name='get_weather', "
                   "gen_ai.tool.type='function', gen_ai.output.type='json'): the tool NAME is recorded, its call id, "
                   "arguments and result are not; the first chat span's gen_ai.output.type is 'text' although it "
                   "returned a function call.",
    "f_error": COMMON + " The chat span is named just 'chat' (no model: the response never came), status ERROR "
               "\"Error getting response: {'error': 'Error code: 500 - The server had an error while processing "
               "your request.'}\"; invoke_agent has status ERROR 'Error in agent run: ...'; 'Agent workflow' stays "
               "OK; no error.type attribute and no exception event.",
    "h_streaming_chat": COMMON + " Runner.run_streamed (Responses API SSE): the spans look exactly like the "
                        "non-streaming run (no streaming flag, no time-to-first-chunk).",
}
SETTINGS = {"how privacy mode was set": "environment OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=NO_CONTENT "
                                        "before OpenAIAgentsInstrumentor().instrument(tracer_provider=...) (also "
                                        "accepted: false/0/no/none/no_content, case-insensitive; or "
                                        "instrument(capture_message_content=False))",
            "is_library_default": False,
            "switch_to_capture_content": "leave OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT and "
                                         "OTEL_INSTRUMENTATION_OPENAI_AGENTS_CAPTURE_CONTENT unset: this "
                                         "instrumentation's DEFAULT is SPAN_AND_EVENT (content on); any "
                                         "unrecognised value also means SPAN_AND_EVENT; span_only / event_only "
                                         "select one place"}
if CONFIG.endswith(".sdk_sensitive_off"):
    BARE = {**NONE, "request_model": "absent", "response_model": "absent", "tokens": "absent", "response_id": "absent"}
    RECORDED = {"a_chat_correct": dict(BARE), "c_tool_call": {**BARE, "tool_names": "present"},
                "h_streaming_chat": dict(BARE), "f_error": dict(BARE)}
    COMMON = ("Scope opentelemetry.instrumentation.openai_agents (no version), schema 1.28.0; the same tree as with "
              "content on ('Agent workflow' > 'unknown' > 'invoke_agent <agent>' > 'unknown' > chat), with the same "
              "instrumentor-default gen_ai.agent.* and server.address='api.openai.com' attributes. With the SDK's "
              "trace_include_sensitive_data off, the Agents SDK's generation/response span data carries no response "
              "object, so the instrumentation (in its content-ON default) records NOTHING of the call either: the "
              "inference span is named just 'chat' and has only gen_ai.operation.name='chat' and "
              "gen_ai.output.type='text' (plus the provider/agent/server defaults): no request or response model, no "
              "usage, no response id, no finish reason, and no content; invoke_agent has no request model either. "
              "No log records.")
    NOTES = {
        "a_chat_correct": COMMON,
        "c_tool_call": COMMON + " Two 'chat' spans and 'execute_tool get_weather' (gen_ai.tool.name, gen_ai.tool.type"
                       "='function', gen_ai.output.type='json'): only the tool NAME survives.",
        "f_error": COMMON + " chat status ERROR \"Error getting response: {'error': 'Error details are redacted.'}\", "
                   "invoke_agent ERROR \"Error in agent run: {'error': 'Error details are redacted.'}\" (the SDK's "
                   "own redaction text in the status message), 'Agent workflow' OK.",
        "h_streaming_chat": COMMON + " Runner.run_streamed: identical to the non-streaming run.",
    }
    SETTINGS = {"how privacy mode was set": "environment OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=false (the Agents "
                                            "SDK's default for RunConfig.trace_include_sensitive_data); the "
                                            "instrumentation's own content variables unset (its default: content on)",
                "is_library_default": False,
                "switch_to_capture_content": "OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=true (the SDK default) or "
                                             "RunConfig(trace_include_sensitive_data=True); then the instrumentation "
                                             "records content unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
                                             "CONTENT=no_content"}
write_capture_json2(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-openai-agents-v2", "openai-agents", "openai", "opentelemetry-util-genai",
     "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, f"scripts/otel-openai-agents-v2.py {CONFIG}")
