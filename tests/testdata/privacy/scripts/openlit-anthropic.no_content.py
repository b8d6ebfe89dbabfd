"""Capture [openlit-anthropic.no_content]: OpenLIT's Anthropic instrumentation with
openlit.init(capture_message_content=False), real anthropic SDK (the newest openlit allows: anthropic<1), local
stand-in. OpenLIT reuses the global tracer and logger providers set before init.

Run inside the configuration's venv: python openlit-anthropic.no_content.py
"""

import os
import sys

os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)  # only the init flag decides here

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_anthropic_scenarios, start_standin  # noqa: E402

CONFIG = "openlit-anthropic.no_content"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)  # registers the global tracer and logger providers, which openlit.init reuses
import openlit  # noqa: E402

# disable_metrics: no meter provider here (openlit would build one exporting to localhost); traces and events as default
openlit.init(capture_message_content=False, disable_metrics=True, disable_batch=True)
import anthropic  # noqa: E402

server, url = start_standin()
client = anthropic.Anthropic(base_url=url, api_key="sk-ant-privacy-standin", max_retries=0)
run_anthropic_scenarios(cap, client)
server.shutdown()

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from sdk_privacy_standin import write_capture_json  # noqa: E402

NONE_RECORDED = {"input": "empty", "output": "empty", "system_prompt": "absent", "tool_arguments": "absent",
                 "tool_results": "absent", "tool_names": "absent", "request_model": "present",
                 "response_model": "present", "tokens": "present", "finish_reason": "present",
                 "response_id": "present", "error_status": "absent"}
recorded = {  # for the scenario's .pb and .logs.pb together
    "a_chat_correct": dict(NONE_RECORDED),
    "c_tool_call": {**NONE_RECORDED, "tool_names": "present", "tool_arguments": "present"},
    "f_error": {**NONE_RECORDED, "input": "absent", "output": "absent", "request_model": "absent",
                "response_model": "absent", "tokens": "absent", "finish_reason": "absent", "response_id": "absent",
                "error_status": "present"},
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("Span: CLIENT 'chat claude-3-5-haiku-20241022', scope openlit.instrumentation.anthropic (no version, no "
          "schema_url), status explicitly OK, telemetry.sdk.name=openlit, gen_ai.provider.name=anthropic, "
          "server.address/port, gen_ai.request.max_tokens, gen_ai.request.stop_sequences=[], raw finish reasons "
          "('end_turn' / 'tool_use'), gen_ai.client.token.usage (total), gen_ai.usage.cost, span attributes "
          "service.name='default' / deployment.environment='default' (NOT the resource's service.name). No content "
          "attributes on the span. Each call also has a child CLIENT span 'POST' from "
          "opentelemetry.instrumentation.httpx. "
          "Logs: one record per call, LogRecord.event_name gen_ai.client.inference.operation.details, body = EMPTY "
          "STRING, gen_ai.input.messages = [] and gen_ai.output.messages = [] (EMPTY arrays), no "
          "gen_ai.system_instructions.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two chat spans under the app span 'weather_assistant'. CONTENT LEAK despite "
                   "capture_message_content=False: the first chat span carries gen_ai.tool.name='get_weather', "
                   "gen_ai.tool.call.id and the tool arguments TWICE, gen_ai.tool.args and gen_ai.tool.call.arguments "
                   "= '{\"city\": \"Paris\"}'; both log records carry gen_ai.tool.definitions (name, description, "
                   "schema). The tool result is not recorded.",
    "f_error": common + " f_error: the chat span has NO attributes at all (no model, provider, error.type): only "
               "status ERROR \"InternalServerError: Error code: 500 - {'type': 'error', 'error': {'type': "
               "'api_error', 'message': 'Internal server error'}}\" and one 'exception' event; the httpx 'POST' child "
               "has http.status_code=500. No log record for the failed call.",
    "h_streaming_chat": common + " gen_ai.request.stream=true; output_tokens 8 (correct). The log record of the "
                        "streamed call has NO trace_id/span_id, so it cannot be joined to the span.",
}
write_capture_json(
    CONFIG, "anthropic",
    ["openlit", "anthropic", "opentelemetry-instrumentation-httpx", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "openlit.init(capture_message_content=False, disable_metrics=True, "
                                 "disable_batch=True) after setting global tracer/logger providers; "
                                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset",
     "is_library_default": False,
     "switch_to_capture_content": "openlit.init(capture_message_content=True) (the default), and do not set "
                                  "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false (openlit reads it: "
                                  "'false' turns content off)",
     "version_notes": "openlit 1.45.0 requires anthropic>=0.42,<1 (pip resolved 0.125.0, which has no native "
                      "OpenTelemetry tracing) and pins opentelemetry-sdk 1.45.1."},
    recorded, notes,
    {"empty_content_values": {"gen_ai.input.messages (log record attribute)": [],
                              "gen_ai.output.messages (log record attribute)": [],
                              "log record body": ""}})
