"""Capture [traceloop-anthropic.no_content]: OpenLLMetry's opentelemetry-instrumentation-anthropic with
TRACELOOP_TRACE_CONTENT=false, real anthropic SDK, local stand-in.

The anthropic SDK (>= 2.x) has its own OpenTelemetry spans, on by default; they are switched off here with
Anthropic(open_telemetry=False) so the file holds only the instrumentation under test (the SDK's own spans are
captured separately as anthropic-sdk-native.default).

Run inside the configuration's venv: python traceloop-anthropic.no_content.py
"""

import os
import sys

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_anthropic_scenarios, start_standin  # noqa: E402

CONFIG = "traceloop-anthropic.no_content"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor  # noqa: E402

AnthropicInstrumentor().instrument(tracer_provider=cap.tracer_provider, logger_provider=cap.logger_provider)
import anthropic  # noqa: E402

server, url = start_standin()
client = anthropic.Anthropic(base_url=url, api_key="sk-ant-privacy-standin", max_retries=0, open_telemetry=False)
run_anthropic_scenarios(cap, client)
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
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("One CLIENT span 'anthropic.chat' per call, scope opentelemetry.instrumentation.anthropic 0.62.4, no "
          "schema_url, status explicitly OK on success; gen_ai.provider.name=anthropic, gen_ai.request.max_tokens, "
          "usage incl. total and cache_read/cache_creation input tokens. Finish reasons are mapped to semconv values "
          "('end_turn' -> 'stop', 'tool_use' -> 'tool_call'). With content off: no gen_ai.input.messages / "
          "gen_ai.output.messages / gen_ai.system_instructions / gen_ai.prompt.* / gen_ai.completion.*, no tool "
          "definitions, no log records.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two 'anthropic.chat' spans under the app span 'weather_assistant'; tool name, "
                   "tool_use id, input and tool_result are not recorded (finish_reasons ['tool_call'] is the only "
                   "hint).",
    "f_error": common + " Status ERROR \"Error code: 500 - {'type': 'error', 'error': {'type': 'api_error', "
               "'message': 'Internal server error'}}\", error.type='InternalServerError', an 'exception' span event.",
    "h_streaming_chat": common + " gen_ai.is_streaming=true. gen_ai.usage.output_tokens is 9, not the API's 8: "
                        "the instrumentation adds message_start's output_tokens (1) to message_delta's cumulative "
                        "figure (8) (the stand-in sends both as the real API does); input_tokens 26 is right.",
}
write_capture_json(
    CONFIG, "anthropic",
    ["opentelemetry-instrumentation-anthropic", "opentelemetry-semantic-conventions-ai", "anthropic",
     "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "environment TRACELOOP_TRACE_CONTENT=false; AnthropicInstrumentor() with its "
                                 "defaults; the SDK's own spans off (Anthropic(open_telemetry=False))",
     "is_library_default": False,
     "switch_to_capture_content": "TRACELOOP_TRACE_CONTENT=true (or unset: the default is 'true'; only the exact "
                                  "value 'true', case-insensitive, enables it in this package; unset or EMPTY = on, "
                                  "'1' = off); with the "
                                  "traceloop-sdk, Traceloop.init(trace_content=True) or the context override "
                                  "'override_enable_content_tracing'"},
    recorded, notes)
