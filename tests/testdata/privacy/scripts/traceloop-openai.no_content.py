"""Capture [traceloop-openai.no_content]: OpenLLMetry's opentelemetry-instrumentation-openai with
TRACELOOP_TRACE_CONTENT=false (set before the instrumentation is imported), real openai SDK, local stand-in.

Run inside the configuration's venv: python traceloop-openai.no_content.py
"""

import os
import sys

os.environ["TRACELOOP_TRACE_CONTENT"] = "false"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_privacy_standin import Capture, run_openai_scenarios, start_standin  # noqa: E402

CONFIG = "traceloop-openai.no_content"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)

cap = Capture(CONFIG, OUT)
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

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
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("One CLIENT span 'openai.chat' per call, scope opentelemetry.instrumentation.openai.v1 0.62.4, no "
          "schema_url; gen_ai.provider.name=openai, gen_ai.is_streaming, gen_ai.openai.api_base, usage incl. "
          "gen_ai.usage.total_tokens. With content off there is no gen_ai.input.messages / gen_ai.output.messages / "
          "gen_ai.prompt.* / gen_ai.completion.* and no llm.request.functions (tool definitions); no log records.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Two 'openai.chat' spans under the app span 'weather_assistant' (scope "
                   "privacy.capture.app). The first call's gen_ai.response.finish_reasons is ['tool_call'] "
                   "(OpenLLMetry "
                   "maps the API's 'tool_calls' to the semconv value 'tool_call'); the tool name, call id, arguments "
                   "and result are not recorded anywhere.",
    "f_error": common + " Status ERROR 'Error code: 500 - The server had an error while processing your request.', "
               "error.type='InternalServerError', an 'exception' span event (exception.type "
               "openai.InternalServerError, stack trace with the capture machine's paths).",
    "h_streaming_chat": common + " gen_ai.is_streaming=true, status explicitly OK; 6 span events "
                        "'gen_ai.content.completion.chunk' WITHOUT attributes (one per chunk, content-free); "
                        "finish reason, response model/id and usage (include_usage chunk) recorded.",
}
write_capture_json(
    CONFIG, "openai",
    ["opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai", "openai", "opentelemetry-sdk",
     "opentelemetry-api", "opentelemetry-instrumentation", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "environment TRACELOOP_TRACE_CONTENT=false; OpenAIInstrumentor() with its defaults "
                                 "(use_attributes=True)",
     "is_library_default": False,
     "switch_to_capture_content": "TRACELOOP_TRACE_CONTENT=true (or unset: the default is 'true'; truthy values "
                                  "true/1/yes/on, case-insensitive; set but EMPTY counts as off in this package); "
                                  "with the traceloop-sdk, "
                                  "Traceloop.init(trace_content=True) or the per-request context override "
                                  "'override_enable_content_tracing'"},
    recorded, notes)
