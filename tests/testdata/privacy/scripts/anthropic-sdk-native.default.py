"""Capture [anthropic-sdk-native.default]: the anthropic SDK's own OpenTelemetry tracing (scope
com.anthropic.sdk.python) in its default content mode (metadata_only): no instrumentation package, only a global
OpenTelemetry tracer provider; ANTHROPIC_OPEN_TELEMETRY* environment variables unset, no open_telemetry option.

c_tool_call runs the SDK's own agent loop, client.beta.messages.tool_runner with a @beta_tool get_weather, which
has spans of its own (the runner's invoke_agent span and the tool's execute_tool span).

Run inside the configuration's venv: python anthropic-sdk-native.default.py
"""

import os
import sys

for var in ("ANTHROPIC_OPEN_TELEMETRY", "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE",
            "ANTHROPIC_OPEN_TELEMETRY_TRACES_MAX_CONTENT_BYTES", "ANTHROPIC_OPEN_TELEMETRY_PROPAGATION"):
    os.environ.pop(var, None)  # library defaults

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdk_privacy_standin as h  # noqa: E402

CONFIG = "anthropic-sdk-native.default"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", CONFIG)
MODEL = "claude-3-5-haiku-20241022"

cap = h.Capture(CONFIG, OUT)  # registers the global tracer provider the SDK's spans go to
import anthropic  # noqa: E402
from anthropic import beta_tool  # noqa: E402


@beta_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city to get the weather for.
    """
    return h.get_weather(city)


server, url = h.start_standin()
client = anthropic.Anthropic(base_url=url, api_key="sk-ant-privacy-standin", max_retries=0)
print("resolved open_telemetry option:", client.open_telemetry)

msgs = [{"role": "user", "content": h.USER}]
client.messages.create(model=MODEL, max_tokens=256, system=h.SYSTEM, messages=msgs)
cap.dump("a_chat_correct")

runner = client.beta.messages.tool_runner(model=MODEL, max_tokens=256, system=h.TOOL_SYSTEM, tools=[get_weather],
                                          messages=[{"role": "user", "content": h.TOOL_USER}])
final = runner.until_done()
assert final.content[0].text == h.TOOL_ANSWER, final
cap.dump("c_tool_call")

h.STATE.fail_next = True
try:
    client.messages.create(model=MODEL, max_tokens=256, system=h.SYSTEM,
                           messages=[{"role": "user", "content": h.ERROR_USER}])
except anthropic.APIStatusError as exc:
    print("f_error raised as expected:", type(exc).__name__)
cap.dump("f_error")

stream = client.messages.create(model=MODEL, max_tokens=256, system=h.SYSTEM, messages=msgs, stream=True)
text = "".join(ev.delta.text for ev in stream if ev.type == "content_block_delta" and ev.delta.type == "text_delta")
assert text == h.ANSWER, text
cap.dump("h_streaming_chat")
server.shutdown()

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
NONE_RECORDED = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
                 "tool_results": "absent", "tool_names": "absent", "request_model": "present",
                 "response_model": "present", "tokens": "present", "finish_reason": "present",
                 "response_id": "present", "error_status": "absent"}
recorded = {
    "a_chat_correct": dict(NONE_RECORDED),
    "c_tool_call": {**NONE_RECORDED, "tool_names": "present"},
    "f_error": {**NONE_RECORDED, "response_model": "absent", "tokens": "absent", "finish_reason": "absent",
                "response_id": "absent", "error_status": "present"},
    "h_streaming_chat": dict(NONE_RECORDED),
}
common = ("One CLIENT span 'anthropic.messages.create' per API call, scope com.anthropic.sdk.python (version = the "
          "SDK's), no schema_url, status explicitly OK on success; gen_ai.provider.name=anthropic, "
          "gen_ai.operation.name=chat, server.address/port, http.* and url.* attributes, anthropic.request.id, "
          "gen_ai.usage.cache_read.input_tokens / gen_ai.usage.cache_write.input_tokens, "
          "anthropic.response.service_tier. The finish reason is ONLY in anthropic.message.stop_reason (raw API "
          "value 'end_turn' / 'tool_use'); there is no gen_ai.response.finish_reasons (not even in content mode). "
          "metadata_only mode has no gen_ai.system_instructions / gen_ai.input.messages / gen_ai.output.messages "
          "(content mode adds exactly these three) and no marker: the attributes are simply absent. No log records, "
          "no span events.")
notes = {
    "a_chat_correct": common,
    "c_tool_call": common + " Run with the SDK's agent loop client.beta.messages.tool_runner (@beta_tool "
                   "get_weather): root INTERNAL span 'anthropic.messages.tool_runner' (gen_ai.operation.name="
                   "invoke_agent, gen_ai.request.model, no response/usage), children: two 'anthropic.messages.create' "
                   "(with anthropic.beta=['message-threads-2026-08-12']) and an INTERNAL span "
                   "'anthropic.custom_tool_use get_weather' (gen_ai.operation.name=execute_tool, gen_ai.tool.name, "
                   "gen_ai.tool.description, gen_ai.tool.call.id, gen_ai.tool.type=function) without arguments or "
                   "result. Tool names and call ids are recorded; arguments and results are not.",
    "f_error": common + " Status ERROR with NO status message, error.type='api_error' (the API's error.type from "
               "the JSON body, not the exception class), http.response.status_code=500, anthropic.request.id of the "
               "error response; no exception event.",
    "h_streaming_chat": common + " gen_ai.request.stream=true, gen_ai.response.time_to_first_chunk (seconds, "
                        "double); usage output_tokens 8 (the cumulative message_delta figure, correct), stop reason, "
                        "response model and id recorded.",
}
h.write_capture_json(
    CONFIG, "anthropic", ["anthropic", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-semantic-conventions",
                          "opentelemetry-exporter-otlp-proto-common"],
    {"how privacy mode was set": "library defaults: a global OpenTelemetry TracerProvider set, no instrumentation "
                                 "package, anthropic.Anthropic(...) without the open_telemetry option, "
                                 "ANTHROPIC_OPEN_TELEMETRY* unset -> resolved {'enabled': True, 'content_mode': "
                                 "'metadata_only', 'max_content_bytes': 750000}",
     "is_library_default": True,
     "switch_to_capture_content": "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content (read once at client "
                                  "construction, compared case-insensitively with 'content'; any other value = "
                                  "metadata_only; ignored when the client is given an open_telemetry option, even {}), "
                                  "or in code Anthropic(open_telemetry={'traces': {'content_mode': 'content'}}). "
                                  "Related: ANTHROPIC_OPEN_TELEMETRY=false / open_telemetry=False turns the spans off; "
                                  "ANTHROPIC_OPEN_TELEMETRY_TRACES_MAX_CONTENT_BYTES (default 750000; over it a span "
                                  "keeps what fits and gets anthropic.content.truncated); "
                                  "ANTHROPIC_OPEN_TELEMETRY_PROPAGATION=false"},
    recorded, notes)
