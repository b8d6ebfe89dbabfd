"""Capture [otel-openai-v2.2.3b0.default]: opentelemetry-instrumentation-openai-v2 2.3b0 (the newest release with
only the legacy, pre-util-genai code path) in its defaults (no content env vars).

Run inside the configuration's venv: python otel-openai-v2.2.3b0.default.py
"""

import os
import sys

for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SEMCONV_STABILITY_OPT_IN",
            "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT", "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK"):
    os.environ.pop(var, None)  # library defaults

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_openai_scenarios, start_standin  # noqa: E402

CONFIG = "otel-openai-v2.2.3b0.default"
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
recorded = {  # for the scenario's .pb and .logs.pb together
    "a_chat_correct": dict(NONE_RECORDED),
    "c_tool_call": {**NONE_RECORDED, "tool_names": "present"},
    "f_error": {**NONE_RECORDED, "response_model": "absent", "tokens": "absent", "finish_reason": "absent",
                "response_id": "absent", "error_status": "present"},
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("Legacy (semconv 1.30) path: one CLIENT span 'chat gpt-4o-mini' per call, scope "
          "opentelemetry.instrumentation.openai_v2 (no scope version), schema_url 1.30.0, gen_ai.system=openai, "
          "gen_ai.openai.response.service_tier; no server.address/port (openai 3.x's base_url is an httpx2.URL). "
          "Per-message log records (LogRecord.event_name gen_ai.system.message / gen_ai.user.message / "
          "gen_ai.assistant.message / gen_ai.tool.message / gen_ai.choice, attribute gen_ai.system=openai, joined to "
          "the span by span_id) are written EVEN WITHOUT content: the message structure is kept, the text is not. "
          "system/user message records have NO body at all (body unset, not an empty string); gen_ai.choice has "
          "body {index, finish_reason, message: {role: 'assistant'}} without 'content'.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two chat spans under the app span 'weather_assistant'. The first gen_ai.choice body "
                   "carries message.tool_calls [{id: 'call_pv8Qw2mT5sLkX1aZ3nR4yB7d', type: function, function: "
                   "{name: get_weather}}] WITHOUT arguments; on the second call the gen_ai.assistant.message record "
                   "has the same tool_calls (no arguments) and the gen_ai.tool.message record has body {id: <call id>} "
                   "only (no result). So tool names and call ids are recorded, arguments and results are not.",
    "f_error": common + " Status ERROR 'Error code: 500 - The server had an error while processing your request.', "
               "error.type='InternalServerError'; no exception event; the log file has only the system/user records "
               "(no gen_ai.choice).",
    "h_streaming_chat": common + " The streamed span has NO gen_ai.response.finish_reasons; the finish reason "
                        "('stop') is only in the gen_ai.choice log record's body. Usage, response model and id on the "
                        "span.",
}
write_capture_json(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-openai-v2", "openai", "httpx", "wrapt", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "library defaults: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset; "
                                 "OpenAIInstrumentor().instrument(tracer_provider=..., logger_provider=...)",
     "is_library_default": True,
     "switch_to_capture_content": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (only 'true', "
                                  "case-insensitive; content goes into the log records' bodies, never onto the span). "
                                  "2.0b0-2.3b0 have no OTEL_SEMCONV_STABILITY_OPT_IN handling and no span_only/... "
                                  "modes (span_only = no content)",
     "version_notes": "2.3b0 needs wrapt<2 (with wrapt 2.x instrument() raises TypeError: wrap_function_wrapper() got "
                      "an unexpected keyword argument 'module') and httpx<1 installed next to openai 3.x (openai_v2 "
                      "imports httpx; with httpx 1.0.dev6, which pip --pre picks, openai 3.57 fails every call: "
                      "module 'httpx' has no attribute 'Timeout'). openai-v2 2.4b0 with opentelemetry-util-genai "
                      "0.4b0 and no OTEL_SEMCONV_STABILITY_OPT_IN takes this same legacy path (checked on one call: "
                      "same "
                      "span attributes and content-less log records)."},
    recorded, notes)
