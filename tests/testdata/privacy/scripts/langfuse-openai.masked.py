"""Capture [langfuse-openai.masked]: the Langfuse Python SDK's OpenAI integration (langfuse.openai.OpenAI) with a mask
function, Langfuse(mask=masking_function): the docs' masking example ("REDACTED" for a string), applied to every
string so that all inputs, outputs and metadata are masked. The real openai SDK talks to the OpenAI stand-in
(sdk_privacy_standin.py); the Langfuse SDK exports to a local OTLP/HTTP endpoint standing in for the Langfuse server
(<base_url>/api/public/otel/v1/traces), as the captured langfuse-openai configuration was made: `<scenario>.pb` is
the protobuf the SDK POSTed (gzip-decoded), the requests of a scenario merged by concatenating resource_spans.

Run inside the configuration's venv: python langfuse-openai.masked.py [--no-manifest]
"""

import gzip
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CONFIG = "langfuse-openai.masked"
os.environ["OTEL_SERVICE_NAME"] = f"privacy-{CONFIG}"
for var in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
    os.environ.pop(var, None)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch2_standin import PRIVACY_DIR, STATE, start_standin  # noqa: E402
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

OUT = os.path.join(PRIVACY_DIR, CONFIG)
os.makedirs(OUT, exist_ok=True)
POSTS: list[bytes] = []


class _Otlp(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:  # noqa: N802
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        if self.path.rstrip("/").endswith("/api/public/otel/v1/traces"):
            POSTS.append(data)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


otlp = ThreadingHTTPServer(("127.0.0.1", 0), _Otlp)
threading.Thread(target=otlp.serve_forever, daemon=True).start()
langfuse_url = f"http://127.0.0.1:{otlp.server_address[1]}"


def masking_function(data: Any, **kwargs: Any) -> Any:
    """The docs' masking function, with its condition (`data.startswith("SECRET_")`) dropped: mask every string."""
    if isinstance(data, str):
        return "REDACTED"
    if isinstance(data, dict):
        return {k: masking_function(v) for k, v in data.items()}
    if isinstance(data, list):
        return [masking_function(item) for item in data]
    return data


from langfuse import Langfuse, observe  # noqa: E402

langfuse = Langfuse(public_key="pk-lf-privacy", secret_key="sk-lf-privacy", base_url=langfuse_url,
                    mask=masking_function, flush_at=1, flush_interval=0.2)
from langfuse.openai import OpenAI  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

server, url = start_standin()
client = OpenAI(base_url=url + "/v1", api_key="sk-privacy-standin", max_retries=0)


def dump(scenario: str) -> None:
    langfuse.flush()
    merged = ExportTraceServiceRequest()
    for body in POSTS:
        merged.resource_spans.extend(ExportTraceServiceRequest.FromString(body).resource_spans)
    n = sum(len(ss.spans) for rs in merged.resource_spans for ss in rs.scope_spans)
    with open(os.path.join(OUT, f"{scenario}.pb"), "wb") as fh:
        fh.write(merged.SerializeToString())
    print(f"{scenario}: {len(POSTS)} POSTs, {n} spans")
    POSTS.clear()


@observe()
def answer_question(question: str) -> str:
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    return client.chat.completions.create(model="gpt-4o-mini", messages=msgs).choices[0].message.content


@observe()
def weather_assistant(question: str) -> str:
    convo: list[dict[str, Any]] = [{"role": "system", "content": TOOL_SYSTEM}, {"role": "user", "content": question}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=convo, tools=OPENAI_TOOLS)
    call = first.choices[0].message.tool_calls[0]
    result = get_weather(**json.loads(call.function.arguments))
    convo.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function",
         "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
    convo.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return client.chat.completions.create(model="gpt-4o-mini", messages=convo,
                                          tools=OPENAI_TOOLS).choices[0].message.content


@observe()
def answer_with_fallback(question: str) -> str:
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    try:
        return client.chat.completions.create(model="gpt-4o-mini", messages=msgs).choices[0].message.content
    except Exception as exc:  # the app catches it
        print("f_error raised as expected:", type(exc).__name__)
        return "Sorry, I cannot answer that right now."


@observe()
def stream_answer(question: str) -> str:
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=msgs, stream=True,
                                            stream_options={"include_usage": True})
    return "".join((c.choices[0].delta.content or "") for c in stream if c.choices)


assert answer_question(USER) == ANSWER
dump("a_chat_correct")
assert weather_assistant(TOOL_USER) == TOOL_ANSWER
dump("c_tool_call")
STATE.fail_next = True
assert answer_with_fallback(ERROR_USER).startswith("Sorry")
dump("f_error")
assert stream_answer(USER) == ANSWER
dump("h_streaming_chat")
langfuse.shutdown()
server.shutdown()
otlp.shutdown()
print("requests:", [(r["path"], bool(r["body"].get("stream"))) for r in STATE.requests])

if len(sys.argv) > 1 and sys.argv[1] == "--no-manifest":
    raise SystemExit(0)

# ---- capture.json: `recorded` was filled in by reading the capture with sdk_privacy_inspect.py
from batch2_standin import write_capture_json2  # noqa: E402

M = "masked:REDACTED"
BASE = {"input": "present", "output": M, "system_prompt": M, "tool_arguments": "absent", "tool_results": "absent",
        "tool_names": "absent", "request_model": "absent", "response_model": "present", "tokens": "present",
        "finish_reason": "absent", "response_id": "absent"}
RECORDED = {"a_chat_correct": dict(BASE),
            "c_tool_call": {**BASE, "tool_arguments": M, "tool_results": M, "tool_names": M},
            "f_error": {**BASE, "output": "absent", "request_model": "present", "response_model": "absent",
                        "tokens": "absent"},
            "h_streaming_chat": {**BASE, "finish_reason": M}}
COMMON = ("Scope 'langfuse-sdk' 5.0.4, all spans INTERNAL, success status UNSET, no gen_ai.* attributes at all: "
          "everything is langfuse.observation.* (JSON strings). Each scenario is one trace: the @observe app span "
          "(langfuse.internal.is_app_root=true, langfuse.observation.type='span') > 'OpenAI-generation' "
          "(type 'generation': input = the request messages (+ tools), output = the response message, model.name, "
          "model.parameters, usage_details). The mask runs on every input/output/metadata value: strings become "
          "'REDACTED', the JSON STRUCTURE is kept (e.g. input '[{\"role\": \"REDACTED\", \"content\": "
          "\"REDACTED\"}, ...]', so roles, tool names and call ids are masked too; null stays null). NOT masked: "
          "the @observe span's input '{\"args\": [\"<the user question in clear>\"], \"kwargs\": {}}': the "
          "decorator passes positional args as a TUPLE, which the docs' mask function (dict/list/str only) returns "
          "unchanged, so the user input is in clear at the trace root while its output is 'REDACTED'. "
          "langfuse.observation.model.name is the RESPONSE model (the request model appears only when no response "
          "came, f_error); no response id, no finish reason (except h).")
NOTES = {
    "a_chat_correct": COMMON,
    "c_tool_call": COMMON + " Two generations; the first one's output '{\"role\": \"REDACTED\", \"tool_calls\": "
                   "[{\"id\": \"REDACTED\", \"function\": {\"arguments\": \"REDACTED\", \"name\": "
                   "\"REDACTED\"}, \"type\": \"REDACTED\"}], \"content\": null}': a tool call is visible, with its "
                   "name, id and arguments masked; the tool result is only in the second generation's input (masked). "
                   "The tool definitions in the input are masked as well (only the property key 'city' survives).",
    "f_error": COMMON + " The generation has status ERROR 'Error code: 500 - The server had an error while "
               "processing your request.', langfuse.observation.level='ERROR' and status_message, model.name "
               "'gpt-4o-mini' (request model), cost_details zeros, no output; the app span (status UNSET) has output "
               "'REDACTED' (the app's fallback string, masked).",
    "h_streaming_chat": COMMON + " Streamed: output is the bare string 'REDACTED' (not a message object), "
                        "completion_start_time set, and langfuse.observation.metadata.finish_reason='\"REDACTED\"' "
                        "(the finish reason goes to metadata, so the mask hits it).",
}
SETTINGS = {"how privacy mode was set": "Langfuse(public_key, secret_key, base_url=<local OTLP endpoint>, "
                                        "mask=masking_function) where masking_function is the docs' example (returns "
                                        "'REDACTED' for a string, recurses into dict and list) with its condition "
                                        "dropped so every string is masked; langfuse.openai.OpenAI client; app "
                                        "functions under @observe()",
            "is_library_default": False,
            "switch_to_capture_content": "construct Langfuse() without mask= (the default records inputs and "
                                         "outputs); per function @observe(capture_input=..., capture_output=...); "
                                         "LANGFUSE_OBSERVE_DECORATOR_IO_CAPTURE_ENABLED for the decorator"}
GT = {}
write_capture_json2(
    CONFIG, "openai",
    ["langfuse", "openai", "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-exporter-otlp-proto-http",
     "opentelemetry-exporter-otlp-proto-common"],
    SETTINGS, RECORDED, NOTES, "scripts/langfuse-openai.masked.py", GT)
