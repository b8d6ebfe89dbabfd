"""Capture [litellm-otel-callback.no_content]: LiteLLM's own OpenTelemetry callback (litellm.callbacks=["otel"])
with litellm.turn_off_message_logging=True (its redaction kill-switch), litellm.completion against the OpenAI
stand-in (sdk_privacy_standin.py); the callback reuses the app's global SDK TracerProvider.

LiteLLM logs in a background thread after the call returns, so each scenario waits until the finished spans stop
changing before it is dumped (and c_tool_call before its app span closes, as an app that waits for logging would).
Run inside the configuration's venv: python litellm-otel-callback.no_content.py [--no-manifest]
"""

import json
import os
import sys
import time

for var in ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "LITELLM_OTEL_V2"):
    os.environ.pop(var, None)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, Capture, start_standin, wait_until  # noqa: E402
from sdk_privacy_standin import (  # noqa: E402
    ANSWER,
    ERROR_USER,
    OPENAI_TOOLS,
    SYSTEM,
    TOOL_ANSWER,
    TOOL_SYSTEM,
    TOOL_USER,
    USER,
    get_weather,
)

CONFIG = "litellm-otel-callback.no_content"
OUT = os.path.join(PRIVACY_DIR, CONFIG)

cap = Capture(CONFIG, OUT)
import litellm  # noqa: E402

litellm.turn_off_message_logging = True
litellm.callbacks = ["otel"]

server, url = start_standin()
KW = {"model": "openai/gpt-4o-mini", "api_base": url + "/v1", "api_key": "sk-privacy-standin", "num_retries": 0,
      "max_retries": 0}


def settle(minimum: int, quiet: float = 1.0, timeout: float = 20.0) -> None:
    """Wait until at least `minimum` spans are finished and none was added for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        n = len(cap.span_exporter.get_finished_spans())
        if n != last:
            last, since = n, time.monotonic()
        elif n >= minimum and time.monotonic() - since >= quiet:
            return
        time.sleep(0.05)
    print("settle: timeout with", last, "spans")


msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
assert litellm.completion(messages=msgs, **KW).choices[0].message.content == ANSWER
settle(1)
cap.dump("a_chat_correct")

with cap.tracer().start_as_current_span("weather_assistant") as app_span:
    convo = [{"role": "system", "content": TOOL_SYSTEM}, {"role": "user", "content": TOOL_USER}]
    first = litellm.completion(messages=convo, tools=OPENAI_TOOLS, **KW)
    call = first.choices[0].message.tool_calls[0]
    result = get_weather(**json.loads(call.function.arguments))
    convo.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": call.function.name,
                                                         "arguments": call.function.arguments}}]})
    convo.append({"role": "tool", "tool_call_id": call.id, "content": result})
    second = litellm.completion(messages=convo, tools=OPENAI_TOOLS, **KW)
    assert second.choices[0].message.content == TOOL_ANSWER
    # with a parent span LiteLLM writes its attributes onto that span (no litellm_request span): wait for the
    # second call's before closing it
    wait_until(lambda: app_span.attributes.get("gen_ai.response.id") == second.id)
    time.sleep(0.5)
settle(1)
cap.dump("c_tool_call")

STATE.fail_next = True
try:
    litellm.completion(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": ERROR_USER}], **KW)
except Exception as exc:  # the app catches it
    print("f_error raised as expected:", type(exc).__name__)
else:
    raise SystemExit("f_error: the call did not raise")
settle(1)
cap.dump("f_error")

stream = litellm.completion(messages=msgs, stream=True, stream_options={"include_usage": True}, **KW)
assert "".join((c.choices[0].delta.content or "") for c in stream if c.choices) == ANSWER
settle(1)
cap.dump("h_streaming_chat")
server.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

NONE = {"input": "absent", "output": "absent", "system_prompt": "absent", "tool_arguments": "absent",
        "tool_results": "absent", "tool_names": "absent", "request_model": "present", "response_model": "present",
        "tokens": "present", "finish_reason": "absent", "response_id": "present"}
RECORDED = {"a_chat_correct": dict(NONE), "c_tool_call": dict(NONE), "h_streaming_chat": dict(NONE),
            "f_error": {**NONE, "response_model": "absent", "tokens": "absent"}}
COMMON = ("LiteLLM's legacy OTel logger (LITELLM_OTEL_V2 unset), scope 'litellm' (no version, no schema_url), on the "
          "app's global SDK TracerProvider; spans written post-hoc from LiteLLM's logging thread. One INTERNAL span "
          "'litellm_request' per call, status explicitly OK: gen_ai.system=openai (no gen_ai.provider.name), "
          "gen_ai.request.model, gen_ai.response.model, gen_ai.response.id, usage (+ metadata.usage_object as a "
          "python-repr string), gen_ai.cost.*, llm.request.type='completion', llm.is_streaming ('False'/'True' "
          "strings), litellm.provider.model, litellm.call_id, ~36 empty 'metadata.user_api_key_*' proxy attributes "
          "and hidden_params (JSON: api_base, response headers, cost). NO gen_ai.response.finish_reasons. With "
          "turn_off_message_logging=True there is no gen_ai.prompt.* / gen_ai.completion.* / gen_ai.input.messages "
          "/ gen_ai.output.messages and no raw_gen_ai_request child span; LiteLLM writes no marker: the content "
          "attributes are left out ('redacted-by-litellm' is only what LiteLLM's other logging callbacks receive). "
          "No log records.")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " With an active parent span LiteLLM creates NO litellm_request span: it writes its "
                   "attributes onto the app's span 'weather_assistant' (scope privacy.capture.app), so the file is ONE "
                   "span whose attributes are those of the SECOND call only (response id chatcmpl-privacy0003, usage "
                   "112/12); the first call (the tool call, 81/15) is overwritten and recorded nowhere. No tool name, "
                   "call id, arguments or result.",
    "f_error": COMMON + " Status ERROR 'litellm.InternalServerError: InternalServerError: OpenAIException - The "
               "server had an error while processing your request.', error.type='InternalServerError', "
               "error.code='internal_error', error.message, error.llm_provider, error.stack_trace and an 'exception' "
               "event. gen_ai.response.id holds LiteLLM's call id (a UUID equal to litellm.call_id), not a provider "
               "response id; no usage, no response model; litellm.provider.model='gpt-4o-mini' (without the "
               "'openai/' prefix).",
    "h_streaming_chat": COMMON + " llm.is_streaming='True'; gen_ai.response.model='gpt-4o-mini' (the request model, "
                        "while the stream said gpt-4o-mini-2024-07-18); usage from the include_usage chunk.",
}
SETTINGS = {"how privacy mode was set": "litellm.turn_off_message_logging = True (module flag, set before "
                                        "litellm.callbacks = ['otel']); OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_"
                                        "CONTENT and LITELLM_OTEL_V2 unset",
            "is_library_default": False,
            "switch_to_capture_content": "litellm.turn_off_message_logging = False (the default); then "
                                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (or "
                                         "SPAN_AND_EVENT / EVENT_ONLY; note 'true' means EVENT_ONLY here, 'false' "
                                         "NO_CONTENT) or OpenTelemetryConfig(capture_message_content=...); unset = "
                                         "span and event (legacy message_logging)"}
GT: dict = {}
write_capture_json2(
    CONFIG, "openai",
    ["litellm", "openai", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-semantic-conventions",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/litellm-otel-callback.no_content.py", GT)
