"""Capture [strands-agents.redacted]: Strands Agents' own telemetry with its attribute redaction switched on
(OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,gen_ai_unredacted_attributes= : the redaction token with an
empty allow-list redacts every sensitive attribute to "[REDACTED]"). Strands has no switch that leaves content out;
this is its privacy mode. Agent(OpenAIModel) against the OpenAI stand-in (batch2_standin.py); OpenAIModel always
streams (SSE with include_usage).

a/f: Agent without tools, agent(question); c: Agent(tools=[get_weather]); h: agent.stream_async(question).
Run inside the configuration's venv: python strands-agents.redacted.py [--no-manifest]
"""

import asyncio
import os
import sys

os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental,gen_ai_unredacted_attributes="

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, Capture, start_standin  # noqa: E402
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_ANSWER, TOOL_SYSTEM, TOOL_USER, USER  # noqa: E402
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

CONFIG = "strands-agents.redacted"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)  # global tracer provider: strands' tracer uses it
from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

server, url = start_standin()


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: the city
    """
    return _weather(city)


def model() -> OpenAIModel:
    return OpenAIModel(client_args={"base_url": url + "/v1", "api_key": "sk-privacy-standin", "max_retries": 0},
                       model_id="gpt-4o-mini")


assert str(Agent(model=model(), system_prompt=SYSTEM, callback_handler=None)(USER)).strip() == ANSWER
cap.dump("a_chat_correct")

weather = Agent(model=model(), system_prompt=TOOL_SYSTEM, tools=[get_weather], callback_handler=None)
assert str(weather(TOOL_USER)).strip() == TOOL_ANSWER
cap.dump("c_tool_call")

STATE.fail_next = True
try:
    Agent(model=model(), system_prompt=SYSTEM, callback_handler=None)(ERROR_USER)
except Exception as exc:  # the app catches it
    print("f_error raised as expected:", type(exc).__name__)
else:
    raise SystemExit("f_error: the call did not raise")
cap.dump("f_error")


async def stream() -> str:
    text = ""
    async for event in Agent(model=model(), system_prompt=SYSTEM, callback_handler=None).stream_async(USER):
        text += event.get("data", "") if isinstance(event, dict) else ""
    return text


assert asyncio.run(stream()).strip() == ANSWER
cap.dump("h_streaming_chat")
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

R = "masked:[REDACTED]"
BASE = {"input": R, "output": R, "system_prompt": R, "tool_arguments": "absent", "tool_results": "absent",
        "tool_names": "absent", "request_model": "present", "response_model": "absent", "tokens": "present",
        "finish_reason": "absent", "response_id": "absent"}
RECORDED = {"a_chat_correct": dict(BASE), "h_streaming_chat": dict(BASE),
            "c_tool_call": {**BASE, "tool_arguments": R, "tool_results": R, "tool_names": "present"},
            "f_error": {**BASE, "output": "absent", "tokens": "absent"}}
COMMON = ("Strands' own spans, scope strands.telemetry.tracer (no version, no schema_url), all INTERNAL, status "
          "explicitly OK: 'invoke_agent Strands Agents' > 'execute_event_loop_cycle' (one per model turn) > 'chat' "
          "(and 'execute_tool get_weather'). gen_ai.provider.name='strands-agents' (NOT the model provider), "
          "gen_ai.request.model, usage under both the new and the old keys (input/output and prompt/completion "
          "tokens), gen_ai.server.time_to_first_token (ms), gen_ai.event.start_time/end_time; NO response model, "
          "response id or finish reason. Content is on span EVENTS 'gen_ai.client.inference.operation.details', one "
          "attribute per event (gen_ai.system_instructions / gen_ai.input.messages / gen_ai.output.messages), and "
          "gen_ai.system_instructions also as an invoke_agent span attribute: every one of them is the string "
          "'[REDACTED]' (the whole JSON value replaced, no message structure kept). OpenAIModel always streams.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " 'execute_tool get_weather': gen_ai.tool.name, gen_ai.tool.call.id "
                   "(call_pv8Qw2mT5sLkX1aZ3nR4yB7d, the model's), gen_ai.tool.description and gen_ai.tool.json_schema "
                   "in clear, gen_ai.tool.call.arguments='[REDACTED]', gen_ai.tool.call.result='[REDACTED]', "
                   "gen_ai.tool.status='success'; invoke_agent has gen_ai.agent.tools='[\"get_weather\"]' and the "
                   "summed usage 193/27.",
    "f_error": COMMON + " chat, execute_event_loop_cycle and invoke_agent: status ERROR \"Error code: 500 - "
               "{'error': {'message': 'The server had an error while processing your request.', ...}}\" and an "
               "'exception' event (openai.InternalServerError) each; no error.type; no output event, no usage.",
    "h_streaming_chat": COMMON + " agent.stream_async: the same spans as a_chat_correct.",
}
SETTINGS = {"how privacy mode was set": "environment OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,"
                                        "gen_ai_unredacted_attributes= (the redaction token with an empty allow-list: "
                                        "every sensitive attribute is replaced by '[REDACTED]'); strands has no "
                                        "switch that leaves content out",
            "is_library_default": False,
            "switch_to_capture_content": "drop the gen_ai_unredacted_attributes token from "
                                         "OTEL_SEMCONV_STABILITY_OPT_IN (content is recorded by default), or list the "
                                         "attributes to keep: gen_ai_unredacted_attributes=gen_ai.input.messages;"
                                         "gen_ai.output.*  (';'-separated, trailing '*' globs)"}
GT = {}
write_capture_json2(
    CONFIG, "openai",
    ["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-semantic-conventions",
     "opentelemetry-instrumentation-threading", "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/strands-agents.redacted.py", GT)
