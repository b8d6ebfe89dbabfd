"""Capture Google ADK's own telemetry with content capture OFF, LlmAgent on Gemini(base_url=<stand-in>) through
InMemoryRunner, against the Gemini stand-in in batch2_standin.py:

- [google-adk.no_content]: ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_
  CONTENT unset (= NO_CONTENT), the default telemetry schema (v2, semconv-aligned);
- [google-adk.schema_v1.no_content]: the same with the legacy schema, ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 (call_llm
  spans with gcp.vertex.agent.* attributes, gen_ai.system.message / gen_ai.user.message / gen_ai.choice log events).

a/f: an agent without tools; c: the agent with the get_weather function tool; h: RunConfig(streaming_mode=SSE).
Run inside the configuration's venv: python google-adk.py [<configuration>] [--no-manifest]
"""

import asyncio
import os
import sys

CONFIGS = ("google-adk.no_content", "google-adk.schema_v1.no_content")
CONFIG = next((a for a in sys.argv[1:] if not a.startswith("--")), CONFIGS[0])
assert CONFIG in CONFIGS, CONFIG
os.environ["ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS"] = "false"
for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SEMCONV_STABILITY_OPT_IN",
            "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", "ADK_EXPERIMENTAL_TELEMETRY", "GOOGLE_GENAI_USE_VERTEXAI"):
    os.environ.pop(var, None)
if CONFIG == "google-adk.schema_v1.no_content":
    os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
os.environ["GOOGLE_API_KEY"] = "privacy-standin-key"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import GEMINI_REQUEST_MODEL, PRIVACY_DIR, STATE, Capture, start_standin  # noqa: E402
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_ANSWER, TOOL_SYSTEM, TOOL_USER, USER  # noqa: E402
from sdk_privacy_standin import get_weather as _weather  # noqa: E402

OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)  # global tracer/logger providers: ADK uses trace.get_tracer
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.agents.run_config import RunConfig, StreamingMode  # noqa: E402
from google.adk.models import Gemini  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

server, url = start_standin()


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return _weather(city)


async def ask(agent: LlmAgent, text: str, run_config: RunConfig | None = None) -> str:
    runner = InMemoryRunner(agent=agent, app_name="privacy_app")
    session = await runner.session_service.create_session(app_name="privacy_app", user_id="user-1")
    final = ""
    async for event in runner.run_async(user_id="user-1", session_id=session.id, run_config=run_config or RunConfig(),
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        if event.content and event.content.parts and not getattr(event, "partial", False):
            final = "".join(p.text or "" for p in event.content.parts) or final
    return final


def model() -> Gemini:
    return Gemini(model=GEMINI_REQUEST_MODEL, base_url=url)


async def main() -> None:
    assistant = LlmAgent(name="assistant", model=model(), instruction=SYSTEM)
    assert await ask(assistant, USER) == ANSWER
    cap.dump("a_chat_correct")

    weather = LlmAgent(name="weather_assistant", model=model(), instruction=TOOL_SYSTEM, tools=[get_weather])
    assert await ask(weather, TOOL_USER) == TOOL_ANSWER
    cap.dump("c_tool_call")

    STATE.fail_next = True
    try:
        await ask(assistant, ERROR_USER)
    except Exception as exc:  # the app catches it
        print("f_error raised as expected:", type(exc).__name__)
    else:
        raise SystemExit("f_error: the run did not raise")
    cap.dump("f_error")

    assert await ask(assistant, USER, RunConfig(streaming_mode=StreamingMode.SSE)) == ANSWER
    cap.dump("h_streaming_chat")


asyncio.run(main())
server.shutdown()
print("requests:", [r["path"].rsplit("/", 1)[-1] for r in STATE.requests])

if "--no-manifest" in sys.argv:
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "absent",
        "tokens": "present", "finish_reason": "present", "response_id": "absent"}
RECORDED = {"a_chat_correct": dict(NONE), "h_streaming_chat": dict(NONE),
            "c_tool_call": {**NONE, "tool_names": "present"},
            "f_error": {**NONE, "tokens": "absent", "finish_reason": "absent"}}
COMMON = ("ADK's own spans, scope gcp.vertex.agent 2.13.0, schema 1.36.0 (telemetry schema v2, the default), all "
          "INTERNAL, success status UNSET: 'invoke_workflow <agent>' > 'invoke_agent <agent>' > 'generate_content "
          "gemini-2.0-flash' (gen_ai.provider.name='gcp.gemini', gen_ai.request.model, finish_reasons, usage, "
          "gen_ai.agent.name, gen_ai.conversation.id = the session id, gcp.vertex.agent.event_id / invocation_id; "
          "NO response model, NO response id). Each inference also writes one log record "
          "'gen_ai.client.inference.operation.details' (scope gcp.vertex.agent, empty body) repeating the span's "
          "metadata. No gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions and no "
          "gcp.vertex.agent.llm_request / llm_response. Setting nothing gives the same content-free attributes in "
          "this version (checked: the same attribute keys): ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS only governs the "
          "legacy schema-v1 spans, and the OTel content variable defaults to NO_CONTENT.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Two generate_content spans carrying gen_ai.tool.definitions (JSON, name + description, "
                   "parameters null) and 'execute_tool get_weather' (gen_ai.tool.name, gen_ai.tool.type="
                   "'FunctionTool', gen_ai.tool.description, gen_ai.tool.call.id = an ADK-made 'adk-<uuid>': Gemini "
                   "sends no call ids); no tool arguments or result. Both inference spans have finish_reasons "
                   "['stop'] (Gemini's STOP also ends a function call).",
    "f_error": COMMON + " generate_content, invoke_agent and invoke_workflow: status ERROR \"ServerError: 500 "
               "INTERNAL. {'error': {'code': 500, 'message': 'Internal error encountered.', 'status': 'INTERNAL'}}\" "
               "and an 'exception' event each (google.genai.errors.ServerError); no error.type attribute; the run "
               "raised to the app.",
    "h_streaming_chat": COMMON + " RunConfig(streaming_mode=SSE): streamGenerateContent; the span looks like the "
                        "non-streaming one (no stream flag); usage from the last chunk.",
}
SETTINGS = {"how privacy mode was set": "environment ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false, "
                                        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT / "
                                        "OTEL_SEMCONV_STABILITY_OPT_IN / ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN unset; "
                                        "global SDK tracer and logger providers",
            "is_library_default": False,
            "same_output_as_library_default": True,
            "switch_to_capture_content": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (or "
                                         "SPAN_AND_EVENT / EVENT_ONLY; 'true' means EVENT_ONLY), or per request "
                                         "RunConfig(telemetry=TelemetryConfig(capture_message_content=...)); with "
                                         "the legacy schema (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1) "
                                         "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true (its default)"}
GT = {}
if CONFIG == "google-adk.schema_v1.no_content":
    E = "masked:<elided>"
    V1 = {**NONE, "input": E, "output": E, "system_prompt": E}
    RECORDED = {"a_chat_correct": dict(V1), "h_streaming_chat": dict(V1),
                "c_tool_call": {**V1, "tool_names": "present", "tool_arguments": "empty", "tool_results": "empty"},
                "f_error": {**V1, "output": "absent", "tokens": "absent", "finish_reason": "absent"}}
    COMMON = ("ADK's own spans with the legacy telemetry schema (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1), scope "
              "gcp.vertex.agent 2.13.0, schema 1.36.0, all INTERNAL, success status UNSET: 'invocation' > "
              "'invoke_agent <agent>' > 'call_llm' (gen_ai.system='gcp.vertex.agent', gen_ai.request.model, usage, "
              "finish_reasons, gcp.vertex.agent.session_id / invocation_id / event_id, and "
              "gcp.vertex.agent.llm_request = '{}' and gcp.vertex.agent.llm_response = '{}': the content attributes "
              "kept as EMPTY JSON objects) > 'generate_content gemini-2.0-flash' (gen_ai.system='gemini', request "
              "model, usage, finish_reasons; no response model or id). Content events as LOG RECORDS (scope "
              "gcp.vertex.agent, attribute gen_ai.system='gemini', on the generate_content span): "
              "gen_ai.system.message, gen_ai.user.message (one per user/tool content) and gen_ai.choice, each body "
              "{'content': '<elided>'} (gen_ai.choice adds index and finish_reason 'STOP' on the last one).")
    NOTES = {
        "a_chat_correct": COMMON,
        "c_tool_call": COMMON + " 'execute_tool get_weather': gen_ai.tool.name / type / description and an ADK-made "
                       "gen_ai.tool.call.id, with gcp.vertex.agent.tool_call_args = '{}', gcp.vertex.agent."
                       "tool_response = '{}' (and llm_request / llm_response = '{}' on the tool span as well). The "
                       "second call's log events: system, three user messages (the question, the model's function "
                       "call, the function response: all '<elided>'), a choice.",
        "f_error": COMMON + " generate_content, call_llm, invoke_agent and invocation: status ERROR \"ServerError: 500 "
                   "INTERNAL. {...}\" and an 'exception' event each; the log records are the system and user "
                   "messages only (no choice).",
        "h_streaming_chat": COMMON + " Streamed: one gen_ai.choice log record PER CHUNK (three, '<elided>'), "
                            "finish_reason only on the last.",
    }
    SETTINGS = {"how privacy mode was set": "environment ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 and "
                                            "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false; "
                                            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset (so the log "
                                            "event bodies are '<elided>'); global SDK tracer and logger providers",
                "is_library_default": False,
                "switch_to_capture_content": "with the legacy schema: ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true (its "
                                             "default) for the gcp.vertex.agent.* span attributes, and "
                                             "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY (or true) "
                                             "for the log event bodies"}
write_capture_json2(
    CONFIG, "gemini",
    ["google-adk", "google-genai", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, f"scripts/google-adk.py {CONFIG}", GT)
