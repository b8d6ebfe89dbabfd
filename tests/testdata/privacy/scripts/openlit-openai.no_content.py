"""Capture [openlit-openai.no_content]: OpenLIT's OpenAI instrumentation with openlit.init(capture_message_content=
False), real openai SDK, local stand-in. OpenLIT reuses the global tracer and logger providers set before init.

Run inside the configuration's venv: python openlit-openai.no_content.py
"""

import os
import sys

os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)  # only the init flag decides here

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_openai_scenarios, start_standin  # noqa: E402

CONFIG = "openlit-openai.no_content"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)  # registers the global tracer and logger providers, which openlit.init reuses
import openlit  # noqa: E402

# disable_metrics: no meter provider here (openlit would build one exporting to localhost); traces and events as default
openlit.init(capture_message_content=False, disable_metrics=True, disable_batch=True)
import openai  # noqa: E402

server, url = start_standin()
client = openai.OpenAI(base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0)
run_openai_scenarios(cap, client)
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
    "f_error": {**NONE_RECORDED, "input": "absent", "output": "absent", "response_model": "absent",
                "tokens": "absent", "finish_reason": "absent", "response_id": "absent", "error_status": "present"},
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("Span: CLIENT 'chat gpt-4o-mini', scope openlit.instrumentation.openai (no version, no schema_url), status "
          "explicitly OK, telemetry.sdk.name=openlit, gen_ai.provider.name=openai, server.address/port, request "
          "parameters (temperature/top_p/penalties/seed with defaults, gen_ai.request.user=''), "
          "gen_ai.server.time_to_first_token, gen_ai.client.token.usage (total), gen_ai.usage.cost, and span "
          "attributes "
          "service.name='default' / deployment.environment='default' (NOT the resource's service.name). No content "
          "attributes on the span. Each call also has a child CLIENT span 'POST' from "
          "opentelemetry.instrumentation.httpx "
          "(openlit.init instruments httpx by default; openlit installs that instrumentation). Logs: one record per "
          "call "
          "with LogRecord.event_name gen_ai.client.inference.operation.details, body = EMPTY STRING, attributes "
          "gen_ai.input.messages = [] and gen_ai.output.messages = [] (EMPTY arrays: the keys are present without "
          "content), plus model/response id/finish reasons/usage/request parameters; no gen_ai.system_instructions.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two chat spans under the app span 'weather_assistant'. CONTENT LEAK despite "
                   "capture_message_content=False: the first chat span carries gen_ai.tool.name='get_weather', "
                   "gen_ai.tool.call.id and gen_ai.tool.args='{\"city\": \"Paris\"}' (the tool arguments); both log "
                   "records carry gen_ai.tool.definitions (name, description, JSON schema). The tool result is not "
                   "recorded.",
    "f_error": common + " f_error: status ERROR \"InternalServerError: Error code: 500 - {'error': {...}}\", "
               "error.type='InternalServerError', the 'exception' event recorded TWICE on the chat span; the httpx "
               "'POST' span has http.status_code=500 and status ERROR. No log record for the failed call.",
    "h_streaming_chat": common + " gen_ai.request.stream=true, gen_ai.server.time_per_output_token. The log record "
                        "of the streamed call has NO trace_id/span_id (emitted after the span ended, outside its "
                        "context), so it cannot be joined to the span.",
}
write_capture_json(
    CONFIG, "openai",
    ["openlit", "openai", "opentelemetry-instrumentation-httpx", "opentelemetry-sdk", "opentelemetry-api",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "openlit.init(capture_message_content=False, disable_metrics=True, "
                                 "disable_batch=True) after setting global tracer/logger providers; "
                                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset",
     "is_library_default": False,
     "switch_to_capture_content": "openlit.init(capture_message_content=True) (the default), or leave the argument "
                                  "at its default and do not set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="
                                  "false (openlit reads that variable: 'false' turns content off; the CLI flag is "
                                  "--no_capture_message_content)",
     "version_notes": "openlit 1.45.0 requires openai<3 (pip resolved openai 2.54.0) and pins opentelemetry-sdk "
                      "1.45.1; it fetches a pricing JSON from the internet at init (failed here, harmless)."},
    recorded, notes,
    {"empty_content_values": {"gen_ai.input.messages (log record attribute)": [],
                              "gen_ai.output.messages (log record attribute)": [],
                              "log record body": ""}})
