"""Deterministic local stand-in for the OpenAI Chat Completions and Anthropic Messages APIs (privacy captures).

Used by the capture scripts beside it (otel-openai-v2.*, traceloop-*.no_content, anthropic-sdk-native.*,
openlit-openai.no_content). Runs http.server on 127.0.0.1 on a free port in a thread of the capture process.

Routing is by request content, so the scenarios need no special flags:
- `STATE.fail_next = True` makes the next request answer HTTP 500 with the provider's JSON error body;
- a request whose last message is a tool result answers "It is 18C and sunny in Paris.";
- a request that offers tools (and has no tool result yet) calls get_weather({"city": "Paris"});
- otherwise it answers "The capital of France is Paris.".
`"stream": true` gets SSE (OpenAI: chunks + usage chunk when stream_options.include_usage; Anthropic: the
message_start .. message_stop event sequence, usage in message_start and the final cumulative one in message_delta).

Also holds the small capture harness the scripts share: in-memory exporters, the SDK's own OTLP encoders, and
writing `<scenario>.pb` / `<scenario>.logs.pb`.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "The capital of France is Paris."
TOOL_ANSWER = "It is 18C and sunny in Paris."
OPENAI_TOOL_CALL_ID = "call_pv8Qw2mT5sLkX1aZ3nR4yB7d"
ANTHROPIC_TOOL_CALL_ID = "toolu_01PrivacyWx7Kd3Lm9Qa2Zr5Tn"
OPENAI_RESPONSE_MODEL = "gpt-4o-mini-2024-07-18"
ANTHROPIC_RESPONSE_MODEL = "claude-3-5-haiku-20241022"

# (input_tokens, output_tokens) per kind of answer
OPENAI_USAGE = {"answer": (26, 7), "tool_call": (81, 15), "tool_answer": (112, 12)}
ANTHROPIC_USAGE = {"answer": (26, 8), "tool_call": (392, 54), "tool_answer": (467, 15)}


@dataclass
class StandinState:
    fail_next: bool = False
    counter: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)


STATE = StandinState()


def _kind(body: dict[str, Any], anthropic: bool) -> str:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if anthropic:
        content = last.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return "tool_answer"
    elif last.get("role") == "tool":
        return "tool_answer"
    return "tool_call" if body.get("tools") else "answer"


def _openai_message(kind: str) -> tuple[dict[str, Any], str]:
    if kind == "tool_call":
        call = {"id": OPENAI_TOOL_CALL_ID, "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}
        return {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None}, "tool_calls"
    text = TOOL_ANSWER if kind == "tool_answer" else ANSWER
    return {"role": "assistant", "content": text, "refusal": None}, "stop"


def _openai_usage(kind: str) -> dict[str, int]:
    i, o = OPENAI_USAGE[kind]
    return {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}


def _anthropic_content(kind: str) -> tuple[list[dict[str, Any]], str]:
    if kind == "tool_call":
        return [{"type": "tool_use", "id": ANTHROPIC_TOOL_CALL_ID, "name": "get_weather",
                 "input": {"city": "Paris"}}], "tool_use"
    return [{"type": "text", "text": TOOL_ANSWER if kind == "tool_answer" else ANSWER}], "end_turn"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, str]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            chunk = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        STATE.requests.append({"path": self.path, "body": body})
        STATE.counter += 1
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/chat/completions"):
            self._openai(body)
        elif path.endswith("/messages"):
            self._anthropic(body)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def _openai(self, body: dict[str, Any]) -> None:
        if STATE.fail_next:
            STATE.fail_next = False
            self._json(500, {"error": {"message": "The server had an error while processing your request.",
                                       "type": "server_error", "param": None, "code": "internal_error"}},
                       {"x-request-id": "req_privacy_err_0001"})
            return
        kind = _kind(body, anthropic=False)
        rid = f"chatcmpl-privacy{STATE.counter:04d}"
        message, finish = _openai_message(kind)
        created = 1764158400
        if not body.get("stream"):
            self._json(200, {"id": rid, "object": "chat.completion", "created": created,
                             "model": OPENAI_RESPONSE_MODEL, "system_fingerprint": "fp_privacy01",
                             "service_tier": "default",
                             "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                             "usage": _openai_usage(kind)})
            return
        base = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": OPENAI_RESPONSE_MODEL,
                "system_fingerprint": "fp_privacy01", "service_tier": "default"}
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        usage_null = {"usage": None} if include_usage else {}
        chunks: list[dict[str, Any]] = []
        if kind == "tool_call":
            call = message["tool_calls"][0]
            chunks.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": None,
                          "tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                          "function": {"name": "get_weather", "arguments": ""}}]},
                          "logprobs": None, "finish_reason": None}], **usage_null})
            for piece in ('{"city"', ': "Paris"}'):
                chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": piece}}]}, "logprobs": None, "finish_reason": None}],
                    **usage_null})
        else:
            chunks.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                "logprobs": None, "finish_reason": None}], **usage_null})
            for piece in ("The capital", " of France", " is Paris."):
                chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "logprobs": None,
                                                    "finish_reason": None}], **usage_null})
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}],
                       **usage_null})
        if include_usage:
            chunks.append({**base, "choices": [], "usage": _openai_usage(kind)})
        self._sse([(None, json.dumps(c)) for c in chunks] + [(None, "[DONE]")])

    def _anthropic(self, body: dict[str, Any]) -> None:
        if STATE.fail_next:
            STATE.fail_next = False
            self._json(500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
                       {"request-id": "req_privacy_err_0001"})
            return
        kind = _kind(body, anthropic=True)
        mid = f"msg_01Privacy{STATE.counter:04d}"
        content, stop = _anthropic_content(kind)
        i, o = ANTHROPIC_USAGE[kind]
        usage = {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "service_tier": "standard"}
        msg = {"id": mid, "type": "message", "role": "assistant", "model": ANTHROPIC_RESPONSE_MODEL,
               "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._json(200, msg, {"request-id": f"req_privacy{STATE.counter:04d}"})
            return
        start = {**msg, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        ev: list[tuple[str | None, str]] = [("message_start", json.dumps({"type": "message_start", "message": start}))]
        block = content[0]
        if block["type"] == "tool_use":
            ev.append(("content_block_start", json.dumps({"type": "content_block_start", "index": 0,
                       "content_block": {**block, "input": {}}})))
            for piece in ('{"city"', ': "Paris"}'):
                ev.append(("content_block_delta", json.dumps({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})))
        else:
            ev.append(("content_block_start", json.dumps({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})))
            for piece in ("The capital", " of France", " is Paris."):
                ev.append(("content_block_delta", json.dumps({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": piece}})))
        ev.append(("content_block_stop", json.dumps({"type": "content_block_stop", "index": 0})))
        ev.append(("message_delta", json.dumps({"type": "message_delta",
                   "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": o}})))
        ev.append(("message_stop", json.dumps({"type": "message_stop"})))
        self._sse(ev)


def start_standin() -> tuple[ThreadingHTTPServer, str]:
    """Start the stand-in on 127.0.0.1:<free port>; returns (server, 'http://127.0.0.1:<port>')."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# ---------------------------------------------------------------- capture harness

SYSTEM = "You are a concise assistant. Answer in one sentence."
USER = "What is the capital of France?"
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
TOOL_USER = "What's the weather in Paris right now?"
ERROR_USER = "What is the status of order #12345?"


def get_weather(city: str) -> str:
    return "18C and sunny"


class Capture:
    """In-memory span (and log) exporters on a tracer/logger provider with service.name privacy-<configuration>."""

    def __init__(self, configuration: str, out_dir: str, logs: bool = True, set_global: bool = True) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.configuration = configuration
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.resource = Resource.create({"service.name": f"privacy-{configuration}"})
        self.span_exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider(resource=self.resource)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        self.log_exporter: Any = None
        self.logger_provider: Any = None
        if logs:
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
            try:
                from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as _InMem
            except ImportError:  # older SDKs
                from opentelemetry.sdk._logs.export import InMemoryLogExporter as _InMem  # type: ignore
            self.log_exporter = _InMem()
            self.logger_provider = LoggerProvider(resource=self.resource)
            self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))
        if set_global:
            from opentelemetry import trace
            trace.set_tracer_provider(self.tracer_provider)
            if self.logger_provider is not None:
                from opentelemetry import _logs
                _logs.set_logger_provider(self.logger_provider)
        self.written: list[str] = []

    def tracer(self) -> Any:
        return self.tracer_provider.get_tracer("privacy.capture.app")

    def dump(self, scenario: str) -> None:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        spans = self.span_exporter.get_finished_spans()
        with open(os.path.join(self.out_dir, f"{scenario}.pb"), "wb") as fh:
            fh.write(encode_spans(spans).SerializeToString())
        self.span_exporter.clear()
        self.written.append(f"{scenario}.pb")
        if self.log_exporter is not None:
            logs = self.log_exporter.get_finished_logs()
            if logs:
                from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

                with open(os.path.join(self.out_dir, f"{scenario}.logs.pb"), "wb") as fh:
                    fh.write(encode_logs(logs).SerializeToString())
                self.written.append(f"{scenario}.logs.pb")
            self.log_exporter.clear()
        print(f"{scenario}: {len(spans)} spans")


OPENAI_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "Get the current weather for a city.",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                     "required": ["city"]}}]


def run_openai_scenarios(cap: Capture, client: Any, model: str = "gpt-4o-mini") -> None:
    """The four scenarios on a real openai.OpenAI client pointed at the stand-in."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    client.chat.completions.create(model=model, messages=msgs)
    cap.dump("a_chat_correct")

    with cap.tracer().start_as_current_span("weather_assistant"):
        convo: list[dict[str, Any]] = [{"role": "system", "content": TOOL_SYSTEM},
                                       {"role": "user", "content": TOOL_USER}]
        first = client.chat.completions.create(model=model, messages=convo, tools=OPENAI_TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = get_weather(**json.loads(call.function.arguments))
        convo.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
        convo.append({"role": "tool", "tool_call_id": call.id, "content": result})
        client.chat.completions.create(model=model, messages=convo, tools=OPENAI_TOOLS)
    cap.dump("c_tool_call")

    STATE.fail_next = True
    try:
        client.chat.completions.create(model=model, messages=[{"role": "system", "content": SYSTEM},
                                                              {"role": "user", "content": ERROR_USER}])
    except Exception as exc:  # the app catches it
        print("f_error raised as expected:", type(exc).__name__)
    else:
        raise SystemExit("f_error: the call did not raise")
    cap.dump("f_error")

    stream = client.chat.completions.create(model=model, messages=msgs, stream=True,
                                            stream_options={"include_usage": True})
    text = "".join((c.choices[0].delta.content or "") for c in stream if c.choices)
    assert text == ANSWER, text
    cap.dump("h_streaming_chat")


def run_anthropic_scenarios(cap: Capture, client: Any, model: str = "claude-3-5-haiku-20241022") -> None:
    """The four scenarios on a real anthropic.Anthropic client pointed at the stand-in."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    client.messages.create(model=model, max_tokens=256, system=SYSTEM, messages=msgs)
    cap.dump("a_chat_correct")

    with cap.tracer().start_as_current_span("weather_assistant"):
        convo: list[dict[str, Any]] = [{"role": "user", "content": TOOL_USER}]
        first = client.messages.create(model=model, max_tokens=256, system=TOOL_SYSTEM, messages=convo,
                                       tools=ANTHROPIC_TOOLS)
        use = next(b for b in first.content if b.type == "tool_use")
        result = get_weather(**use.input)
        convo.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": use.id, "name": use.name, "input": use.input}]})
        convo.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": result}]})
        client.messages.create(model=model, max_tokens=256, system=TOOL_SYSTEM, messages=convo, tools=ANTHROPIC_TOOLS)
    cap.dump("c_tool_call")

    STATE.fail_next = True
    try:
        client.messages.create(model=model, max_tokens=256, system=SYSTEM,
                               messages=[{"role": "user", "content": ERROR_USER}])
    except Exception as exc:
        print("f_error raised as expected:", type(exc).__name__)
    else:
        raise SystemExit("f_error: the call did not raise")
    cap.dump("f_error")

    stream = client.messages.create(model=model, max_tokens=256, system=SYSTEM, messages=msgs, stream=True)
    text = "".join(ev.delta.text for ev in stream if ev.type == "content_block_delta" and ev.delta.type == "text_delta")
    assert text == ANSWER, text
    cap.dump("h_streaming_chat")


# ---------------------------------------------------------------- capture.json

def ground_truth(provider: str, scenario: str) -> dict[str, Any]:
    """What the app and the stand-in did in each scenario (independent of what the library recorded)."""
    openai_ = provider == "openai"
    usage = OPENAI_USAGE if openai_ else ANTHROPIC_USAGE
    req = "gpt-4o-mini" if openai_ else ANTHROPIC_RESPONSE_MODEL
    resp = OPENAI_RESPONSE_MODEL if openai_ else ANTHROPIC_RESPONSE_MODEL
    gt: dict[str, Any] = {"user_input": USER, "system_prompt": SYSTEM, "final_output": ANSWER, "request_model": req,
                          "response_model": resp, "llm_call_count": 1, "input_tokens": usage["answer"][0],
                          "output_tokens": usage["answer"][1], "tool_calls": [], "error": False,
                          "finish_reason": "stop" if openai_ else "end_turn"}
    if scenario == "c_tool_call":
        gt.update(user_input=TOOL_USER, system_prompt=TOOL_SYSTEM, final_output=TOOL_ANSWER, llm_call_count=2,
                  input_tokens=usage["tool_call"][0] + usage["tool_answer"][0],
                  output_tokens=usage["tool_call"][1] + usage["tool_answer"][1], tool_calls=["get_weather"],
                  tool_call_ids=[OPENAI_TOOL_CALL_ID if openai_ else ANTHROPIC_TOOL_CALL_ID],
                  tool_arguments=[{"city": "Paris"}], tool_results=[get_weather("Paris")])
    elif scenario == "f_error":
        gt.update(user_input=ERROR_USER, final_output=None, response_model=None, input_tokens=0, output_tokens=0,
                  error=True, finish_reason=None, http_status=500)
    return gt


def _scope_names(out_dir: str) -> list[str]:
    import glob

    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    names: set[str] = set()
    for path in glob.glob(os.path.join(out_dir, "*.pb")):
        with open(path, "rb") as fh:
            data = fh.read()
        if path.endswith(".logs.pb"):
            for rl in ExportLogsServiceRequest.FromString(data).resource_logs:
                names.update(sl.scope.name for sl in rl.scope_logs)
        else:
            for rs in ExportTraceServiceRequest.FromString(data).resource_spans:
                names.update(ss.scope.name for ss in rs.scope_spans)
    return sorted(names)


def write_capture_json(configuration: str, provider: str, package_names: list[str], settings: dict[str, Any],
                       recorded: dict[str, dict[str, str]], notes: dict[str, str], extra: dict[str, Any] | None = None
                       ) -> None:
    """Write <configuration>/capture.json; run in the configuration's venv (package versions come from it)."""
    from importlib.metadata import PackageNotFoundError, version

    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", configuration)
    packages: dict[str, str] = {}
    for name in package_names:
        with contextlib.suppress(PackageNotFoundError):
            packages[name] = version(name)
    files = []
    for scenario in ("a_chat_correct", "c_tool_call", "f_error", "h_streaming_chat"):
        for suffix in (".pb", ".logs.pb"):
            fname = scenario + suffix
            if os.path.exists(os.path.join(out_dir, fname)):
                files.append({"file": fname, "scenario": scenario, "ground_truth": ground_truth(provider, scenario),
                              "recorded": recorded[scenario], "notes": notes.get(scenario, "")})
    doc: dict[str, Any] = {"configuration": configuration, "packages": packages, "settings": settings,
                           "scope_names": _scope_names(out_dir),
                           # none of these SDK-level configurations writes a marker string in place of content:
                           # content is left out, or (OpenLIT) left as an empty value, listed in extra
                           "masking_markers": [], "files": files}
    doc.update(extra or {})
    with open(os.path.join(out_dir, "capture.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print("wrote", os.path.join(out_dir, "capture.json"))
