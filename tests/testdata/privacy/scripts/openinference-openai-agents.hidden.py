"""Capture [openinference-openai-agents.hidden]: openinference-instrumentation-openai-agents with
OPENINFERENCE_HIDE_INPUTS=true and OPENINFERENCE_HIDE_OUTPUTS=true, the OpenAI Agents SDK (Runner.run /
Runner.run_streamed, Responses API) against the Responses stand-in in batch2_standin.py.

Run inside the configuration's venv: python openinference-openai-agents.hidden.py [--no-manifest]
"""

import asyncio
import os
import sys

CONFIG = "openinference-openai-agents.hidden"
os.environ["OPENINFERENCE_HIDE_INPUTS"] = "true"
os.environ["OPENINFERENCE_HIDE_OUTPUTS"] = "true"
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "0"
os.environ.pop("OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA", None)

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
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

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

R = "masked:__REDACTED__"
HIDDEN = {"input": R, "output": R, "system_prompt": "present", "tool_arguments": "absent", "tool_results": "absent",
          "tool_names": "absent", "request_model": "absent", "response_model": "present", "tokens": "present",
          "finish_reason": "present", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(HIDDEN), "h_streaming_chat": dict(HIDDEN),
            "c_tool_call": {**HIDDEN, "tool_arguments": R, "tool_results": R, "tool_names": "present"},
            "f_error": {k: "absent" for k in HIDDEN}}
COMMON = ("Scope openinference.instrumentation.openai_agents 2.6.0, no schema_url, all spans INTERNAL with status "
          "explicitly OK: 'Agent workflow' (AGENT) > 'Agent workflow' (CHAIN) > '<agent name>' (AGENT, agent.name, "
          "graph.node.id) > 'turn' (CHAIN) > 'response' (LLM: llm.system=openai, llm.model_name = the RESPONSE "
          "model, llm.token_count.* incl. cache_read / reasoning details, llm.finish_reason, input.value / "
          "output.value '__REDACTED__', llm.input_messages.* / llm.output_messages.* dropped). CONTENT IN CLEAR "
          "despite HIDE_INPUTS/OUTPUTS (see unmasked_content): llm.invocation_parameters is the Responses API "
          "response object minus input/output, so it holds 'instructions' = the agent's system prompt, plus the "
          "response id and model (OPENINFERENCE_HIDE_LLM_INVOCATION_PARAMETERS would hide it). The request model "
          "'gpt-4o-mini' is recorded nowhere.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Two 'response' spans (both llm.finish_reason 'stop': the Responses API status, also "
                   "for the turn that returned a function call) and a TOOL span 'get_weather' (tool.name, "
                   "tool.description, tool.parameters JSON schema in clear; input.value / output.value = arguments / "
                   "result '__REDACTED__'); no tool call id.",
    "f_error": "Same tree; the 'response' span has ONLY llm.system='openai' and openinference.span.kind=LLM (no "
               "model, tokens, input or output: the Agents SDK's response span had no response), status ERROR "
               "\"Error getting response: {'error': 'Error code: 500 - The server had an error while processing your "
               "request.'}\"; the agent span ERROR 'Error in agent run: ...'; both 'Agent workflow' spans OK.",
    "h_streaming_chat": COMMON + " Runner.run_streamed: identical to the non-streaming run.",
}
SETTINGS = {"how privacy mode was set": "environment OPENINFERENCE_HIDE_INPUTS=true and OPENINFERENCE_HIDE_OUTPUTS="
                                        "true before OpenAIAgentsInstrumentor().instrument(tracer_provider=...); the "
                                        "Agents SDK's trace_include_sensitive_data left at its default (true)",
            "is_library_default": False,
            "switch_to_capture_content": "unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS (or =false); "
                                         "in code instrument(config=TraceConfig(hide_inputs=False, "
                                         "hide_outputs=False)). Library default records everything."}
UNMASKED = {"unmasked_content": {"system_prompt": ["llm.invocation_parameters (instructions)"]}}
FILE_EXTRA = {"a_chat_correct": UNMASKED, "c_tool_call": UNMASKED, "h_streaming_chat": UNMASKED}
write_capture_json2(
    CONFIG, "openai",
    ["openinference-instrumentation-openai-agents", "openinference-instrumentation",
     "openinference-semantic-conventions", "openai-agents", "openai", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/openinference-openai-agents.hidden.py", file_extra=FILE_EXTRA)
