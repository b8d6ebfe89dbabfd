"""Capture [otel-google-genai.default]: opentelemetry-instrumentation-google-genai in its defaults (nothing set:
message content not captured), the real google-genai SDK against the Gemini stand-in in batch2_standin.py.

Run inside the configuration's venv: python otel-google-genai.default.py
"""

import os
import sys

for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SEMCONV_STABILITY_OPT_IN"):
    os.environ.pop(var, None)  # the library defaults

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import (  # noqa: E402
    GEMINI_REQUEST_MODEL,
    PRIVACY_DIR,
    STATE,
    Capture,
    start_standin,
)
from sdk_privacy_standin import ANSWER, ERROR_USER, SYSTEM, TOOL_SYSTEM, TOOL_USER, USER, get_weather  # noqa: E402

CONFIG = "otel-google-genai.default"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor  # noqa: E402

GoogleGenAiSdkInstrumentor().instrument(tracer_provider=cap.tracer_provider, logger_provider=cap.logger_provider)
from google import genai  # noqa: E402
from google.genai import types  # noqa: E402

server, url = start_standin()
client = genai.Client(api_key="privacy-standin-key", http_options=types.HttpOptions(base_url=url))
model = GEMINI_REQUEST_MODEL

client.models.generate_content(model=model, contents=USER,
                               config=types.GenerateContentConfig(system_instruction=SYSTEM))
cap.dump("a_chat_correct")

weather = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="Get the current weather for a city.",
    parameters=types.Schema(type="OBJECT", properties={"city": types.Schema(type="STRING")}, required=["city"]))])
tool_cfg = types.GenerateContentConfig(system_instruction=TOOL_SYSTEM, tools=[weather])
with cap.tracer().start_as_current_span("weather_assistant"):
    contents = [types.Content(role="user", parts=[types.Part.from_text(text=TOOL_USER)])]
    first = client.models.generate_content(model=model, contents=contents, config=tool_cfg)
    call = first.function_calls[0]
    result = get_weather(**call.args)
    contents.append(first.candidates[0].content)
    contents.append(types.Content(role="user", parts=[types.Part.from_function_response(
        name=call.name, response={"result": result})]))
    client.models.generate_content(model=model, contents=contents, config=tool_cfg)
cap.dump("c_tool_call")

STATE.fail_next = True
try:
    client.models.generate_content(model=model, contents=ERROR_USER,
                                   config=types.GenerateContentConfig(system_instruction=SYSTEM))
except Exception as exc:  # the app catches it
    print("f_error raised as expected:", type(exc).__name__)
else:
    raise SystemExit("f_error: the call did not raise")
cap.dump("f_error")

text = "".join(c.text or "" for c in client.models.generate_content_stream(
    model=model, contents=USER, config=types.GenerateContentConfig(system_instruction=SYSTEM)))
assert text == ANSWER, text
cap.dump("h_streaming_chat")
server.shutdown()
assert len([r for r in STATE.requests if ":generate" in r["path"] or ":stream" in r["path"]]) == 5, STATE.requests

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "present",
        "tokens": "present", "finish_reason": "present", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE), "c_tool_call": dict(NONE), "h_streaming_chat": dict(NONE),
            "f_error": {**NONE, "response_model": "absent", "tokens": "absent", "finish_reason": "absent",
                        "response_id": "absent"}}
COMMON = ("One CLIENT span 'generate_content gemini-2.0-flash' per call, scope opentelemetry.instrumentation."
          "google_genai 1.3b0, schema 1.37.0: gen_ai.operation.name=generate_content, gen_ai.provider.name=gemini, "
          "request/response model, gen_ai.response.id, usage incl. gen_ai.usage.text.input_tokens; success status "
          "UNSET. With content off there is no gen_ai.input.messages / gen_ai.output.messages / "
          "gen_ai.system_instructions / gen_ai.tool.definitions. The instrumentation forces "
          "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT=true, so each call ALSO writes one log record "
          "'gen_ai.client.inference.operation.details' (empty body) repeating the span's metadata attributes, "
          "without content (in <scenario>.logs.pb).")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Two generate_content spans under the app span 'weather_assistant' (scope "
                   "privacy.capture.app). Gemini answers a function call with finishReason STOP, so both spans carry "
                   "gen_ai.response.finish_reasons=['stop']; the tool name, arguments and result appear nowhere (the "
                   "instrumentation wraps only Python-callable tools for execute_tool spans; a FunctionDeclaration "
                   "tool run by the app gives none).",
    "f_error": COMMON + " Status ERROR with message \"500 INTERNAL. {'error': {'code': 500, 'message': 'Internal error "
               "encountered.', 'status': 'INTERNAL'}}\", error.type='500' (the HTTP status code as a string), no "
               "exception event; the log record carries error.type too.",
    "h_streaming_chat": COMMON + " gen_ai.request.stream=true and gen_ai.response.time_to_first_chunk (seconds, "
                        "double); usage from the last chunk.",
}
SETTINGS = {"how privacy mode was set": "nothing set: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT and "
                                        "OTEL_SEMCONV_STABILITY_OPT_IN unset (util-genai defaults to NO_CONTENT); "
                                        "GoogleGenAiSdkInstrumentor().instrument(tracer_provider, logger_provider)",
            "is_library_default": True,
            "switch_to_capture_content": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (or "
                                         "EVENT_ONLY / SPAN_AND_EVENT; case-insensitive; unset or NO_CONTENT = off)"}

write_capture_json2(
    CONFIG, "gemini",
    ["opentelemetry-instrumentation-google-genai", "opentelemetry-util-genai", "google-genai", "opentelemetry-sdk",
     "opentelemetry-api", "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/otel-google-genai.default.py")
