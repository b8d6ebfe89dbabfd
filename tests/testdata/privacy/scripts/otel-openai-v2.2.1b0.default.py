"""Capture [otel-openai-v2.2.1b0.default]: opentelemetry-instrumentation-openai-v2 2.1b0 (the Events-API era:
content-less messages are Events written through an EventLoggerProvider) in its defaults (no content env vars).

Run inside the configuration's venv: python otel-openai-v2.2.1b0.default.py
"""

import os
import sys

for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_SEMCONV_STABILITY_OPT_IN",
            "OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT", "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK"):
    os.environ.pop(var, None)  # library defaults

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_openai_scenarios, start_standin  # noqa: E402

CONFIG = "otel-openai-v2.2.1b0.default"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.sdk._events import EventLoggerProvider  # noqa: E402

# 2.1b0 writes its message events through the (since removed) Events API: it takes event_logger_provider
OpenAIInstrumentor().instrument(tracer_provider=cap.tracer_provider,
                                event_logger_provider=EventLoggerProvider(cap.logger_provider))
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
common = ("Events-API era (semconv 1.28): one CLIENT span 'chat gpt-4o-mini' per call, scope "
          "opentelemetry.instrumentation.openai_v2 (no version), schema_url 1.28.0, gen_ai.system=openai; on "
          "non-streamed calls the response's service tier is recorded under gen_ai.openai.REQUEST.service_tier "
          "(gen_ai.openai.response.service_tier on the streamed one). Per-message Events written as log records whose "
          "name is the ATTRIBUTE event.name (gen_ai.system.message / gen_ai.user.message / gen_ai.assistant.message / "
          "gen_ai.tool.message / gen_ai.choice; LogRecord.event_name is unset), attribute gen_ai.system=openai, joined "
          "to the span by span_id. Without content the structure is kept: system/user records have NO body; "
          "gen_ai.choice has {index, finish_reason, message: {role: 'assistant'}} without 'content'. No "
          "server.address/port (openai 3.x's base_url is an httpx2.URL).")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two chat spans under the app span 'weather_assistant'. The first gen_ai.choice has "
                   "message.tool_calls [{id, type: function, function: {name: get_weather}}] WITHOUT arguments; the "
                   "second call's gen_ai.assistant.message repeats it and gen_ai.tool.message has body {id: <call id>} "
                   "only. Tool names and call ids are recorded, arguments and results are not.",
    "f_error": common + " Status ERROR 'Error code: 500 - The server had an error while processing your request.', "
               "error.type='InternalServerError'; no exception event; logs: only the system/user records.",
    "h_streaming_chat": common + " No gen_ai.response.finish_reasons on the streamed span; the finish reason is only "
                        "in the gen_ai.choice record.",
}
write_capture_json(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-openai-v2", "openai", "httpx", "wrapt", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "library defaults: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset; "
                                 "OpenAIInstrumentor().instrument(tracer_provider=..., event_logger_provider="
                                 "EventLoggerProvider(logger_provider))",
     "is_library_default": True,
     "switch_to_capture_content": "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (only 'true', "
                                  "case-insensitive; content goes into the event bodies, never onto the span)",
     "version_notes": "2.1b0 imports opentelemetry._events, which opentelemetry-api 1.44+ no longer has "
                      "(ModuleNotFoundError): newest working API/SDK is 1.43.0 (instrumentation/semconv 0.64b0); "
                      "also needs wrapt<2 and httpx<1 next to openai 3.x. Without an event_logger_provider (or a "
                      "global one) the events go nowhere: this capture passes it explicitly."},
    recorded, notes)
