"""Capture [otel-openai-v2.default]: opentelemetry-instrumentation-openai-v2 in its defaults (no content env vars).

Run inside the configuration's venv: python otel-openai-v2.default.py [configuration-name]
(the configuration name defaults to otel-openai-v2.default; the same script captures older openai-v2 releases).
"""

import os
import sys

for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SEMCONV_STABILITY_OPT_IN",
            "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT", "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK"):
    os.environ.pop(var, None)  # library defaults

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_openai_scenarios, start_standin  # noqa: E402

CONFIG = sys.argv[1] if len(sys.argv) > 1 else "otel-openai-v2.default"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=cap.tracer_provider, logger_provider=cap.logger_provider)
import openai  # noqa: E402

server, url = start_standin()
client = openai.OpenAI(base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0)
run_openai_scenarios(cap, client)
server.shutdown()

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from sdk_privacy_standin import write_capture_json  # noqa: E402

NONE_RECORDED = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
                 "tool_results": "absent", "tool_names": "absent", "request_model": "present",
                 "response_model": "present", "tokens": "present", "finish_reason": "present",
                 "response_id": "present", "error_status": "absent"}
recorded = {
    "a_chat_correct": dict(NONE_RECORDED),
    "c_tool_call": dict(NONE_RECORDED),
    "f_error": {**NONE_RECORDED, "response_model": "absent", "tokens": "absent", "finish_reason": "absent",
                "response_id": "absent", "error_status": "present"},
    "h_streaming_chat": {**NONE_RECORDED, "finish_reason": "absent"},
}
common = ("One CLIENT span 'chat gpt-4o-mini' per call, scope opentelemetry.util.genai.handler (version = the "
          "util-genai version), schema_url 1.37.0, gen_ai.provider.name=openai (no gen_ai.system); no "
          "gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions / gen_ai.tool.definitions, no "
          "span events and no log records at all. No server.address/server.port: openai 3.x's base_url is an "
          "httpx2.URL, which the instrumentation's isinstance(base_url, httpx.URL) check does not recognise.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " The two chat spans are children of the app span 'weather_assistant' (scope "
                   "privacy.capture.app); neither the tool name, the call id, the arguments nor the result is "
                   "recorded (finish_reasons ['tool_calls'] on the first call is the only hint of a tool call).",
    "f_error": common + " Status ERROR with message 'Error code: 500 - The server had an error while processing "
               "your request.'; error.type is the string \"<class 'openai.InternalServerError'>\" (openai-v2 2.4b0 "
               "passes the exception class to util-genai 1.1b0's Error(type=...), which expects a str; the SDK "
               "stringifies it with a warning). No exception event.",
    "h_streaming_chat": common + " stream=True with stream_options.include_usage: tokens, response model and id "
                        "are recorded, gen_ai.response.finish_reasons is NOT (absent on the streamed span).",
}
write_capture_json(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai", "httpx", "opentelemetry-sdk",
     "opentelemetry-api", "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "library defaults: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, "
                                 "OTEL_SEMCONV_STABILITY_OPT_IN and OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT unset; "
                                 "OpenAIInstrumentor().instrument(tracer_provider=..., logger_provider=...)",
     "is_library_default": True,
     "switch_to_capture_content": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (or span_and_event / "
                                  "event_only). With util-genai >= 1.0b0 the new conventions are always on and "
                                  "'true' is NOT accepted (warning, falls back to NO_CONTENT); no "
                                  "OTEL_SEMCONV_STABILITY_OPT_IN needed",
     "version_notes": "newest combination that imports: openai-v2 2.4b0 needs opentelemetry-util-genai<=1.1b0 "
                      "(1.2b0/1.3b0 renamed util.genai.instruments to _instruments: ModuleNotFoundError) and the "
                      "package httpx installed (openai 3.x depends on httpx2 only; openai_v2/utils.py does "
                      "'from httpx import URL': ModuleNotFoundError; it must be httpx<1: with httpx 1.0.dev6, which "
                      "pip --pre picks, openai 3.57 fails every call with module 'httpx' has no attribute 'Timeout'). "
                      "util-genai 1.0b0 behaves as 1.1b0 here (always the new conventions); with util-genai 0.4b0, "
                      "2.4b0 takes the legacy path unless OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental "
                      "(see otel-openai-v2.2.3b0.default for what the legacy path records)"},
    recorded, notes)
