"""Deterministic local stand-in for the OpenAI Chat Completions and Anthropic Messages APIs (issue 15 captures).

Used by the privacy-mode capture scripts openinference-openai.*, openinference-langchain.hidden,
pydantic-ai-*.no_content and logfire-openai.scrubbed. Started in a background thread on 127.0.0.1, free port.

Behaviour (decided from the request body only, so every run gives the same answers):
- a user message containing "order #12345" -> HTTP 500 with a JSON error body (clients run with max_retries=0);
- tools offered and no tool result in the conversation yet -> one get_weather({"city": "Paris"}) tool call;
- a tool result in the conversation -> "It is 18C and sunny in Paris.";
- a user message containing "password" -> ANSWER_SECRET (mentions the api_key, for logfire's scrubbing);
- otherwise -> "The capital of France is Paris."
Both APIs answer non-streaming and streaming (SSE) with usage figures.

Also holds `dump()`, which writes the spans/logs of one scenario with the OTel SDK's own OTLP encoders.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from aiohttp import web

ANSWER_PARIS = "The capital of France is Paris."
ANSWER_TOOL = "It is 18C and sunny in Paris."
ANSWER_SECRET = "The capital of France is Paris; never share your password, and keep your api_key secret too."
OPENAI_MODEL = "gpt-4o-mini-2024-07-18"
TOOL_CALL_ID = "call_privacy0001weather"
TOOLU_ID = "toolu_privacy0001weather"
# (input_tokens, output_tokens) per kind of answer
USAGE = {"paris": (26, 7), "tool_call": (82, 17), "tool_answer": (118, 12), "secret": (31, 22)}
TEXT = {"paris": ANSWER_PARIS, "tool_answer": ANSWER_TOOL, "secret": ANSWER_SECRET}


def _texts(messages: list[dict[str, Any]]) -> str:
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            for part in c:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
    return "\n".join(out)


def _decide_openai(body: dict[str, Any]) -> str:
    msgs = body.get("messages", [])
    user = _texts([m for m in msgs if m.get("role") == "user"])
    if "order #12345" in user:
        return "error"
    if any(m.get("role") == "tool" for m in msgs):
        return "tool_answer"
    if body.get("tools"):
        return "tool_call"
    return "secret" if "password" in user else "paris"


def _decide_anthropic(body: dict[str, Any]) -> str:
    msgs = body.get("messages", [])
    user = _texts([m for m in msgs if m.get("role") == "user"])
    if "order #12345" in user:
        return "error"
    for m in msgs:
        c = m.get("content")
        if isinstance(c, list) and any(isinstance(p, dict) and p.get("type") == "tool_result" for p in c):
            return "tool_answer"
    if body.get("tools"):
        return "tool_call"
    return "secret" if "password" in user else "paris"


class StandIn:
    def __init__(self) -> None:
        self.counter = 0
        self.requests: list[dict[str, Any]] = []
        self.base_url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> StandIn:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("stand-in did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._runner is not None:
            fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
            fut.result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        self._ready.set()
        self._loop.run_forever()

    def _next_id(self) -> int:
        self.counter += 1
        return self.counter

    # ---------------------------------------------------------------- OpenAI
    async def _openai(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append({"api": "openai", "body": body})
        kind = _decide_openai(body)
        if kind == "error":
            err = {"error": {"message": "The server had an error while processing your request. Sorry about that!",
                             "type": "server_error", "param": None, "code": None}}
            return web.json_response(err, status=500)
        n = self._next_id()
        rid = f"chatcmpl-privacy{n:04d}"
        pin, pout = USAGE[kind]
        usage = {"prompt_tokens": pin, "completion_tokens": pout, "total_tokens": pin + pout,
                 "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                               "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
        created = 1764100000 + n
        if kind == "tool_call":
            tool_calls = [{"id": TOOL_CALL_ID, "type": "function",
                           "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": tool_calls,
                                       "refusal": None}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": TEXT[kind], "refusal": None}
            finish = "stop"
        if not body.get("stream"):
            return web.json_response({
                "id": rid, "object": "chat.completion", "created": created, "model": OPENAI_MODEL,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage, "system_fingerprint": "fp_privacy", "service_tier": "default"})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def chunk(delta: dict[str, Any], fin: str | None, use: Any = None, choices: bool = True) -> None:
            c: dict[str, Any] = {"id": rid, "object": "chat.completion.chunk", "created": created,
                                 "model": OPENAI_MODEL, "system_fingerprint": "fp_privacy",
                                 "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": fin}]
                                 if choices else []}
            if use is not None:
                c["usage"] = use
            await resp.write(f"data: {json.dumps(c)}\n\n".encode())

        await chunk({"role": "assistant", "content": "" if kind != "tool_call" else None, "refusal": None}, None)
        if kind == "tool_call":
            await chunk({"tool_calls": [{"index": 0, "id": TOOL_CALL_ID, "type": "function",
                                         "function": {"name": "get_weather", "arguments": ""}}]}, None)
            for piece in ('{"city": ', '"Paris"}'):
                await chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, None)
        else:
            words = TEXT[kind].split(" ")
            for i, w in enumerate(words):
                await chunk({"content": w if i == 0 else " " + w}, None)
        await chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            await chunk({}, None, usage, choices=False)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    # ---------------------------------------------------------------- Anthropic
    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append({"api": "anthropic", "body": body})
        kind = _decide_anthropic(body)
        if kind == "error":
            err = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
            return web.json_response(err, status=500)
        n = self._next_id()
        mid = f"msg_privacy{n:04d}"
        model = body.get("model", "claude-3-5-haiku-20241022")
        pin, pout = USAGE[kind]
        if kind == "tool_call":
            content: list[dict[str, Any]] = [{"type": "tool_use", "id": TOOLU_ID, "name": "get_weather",
                                              "input": {"city": "Paris"}}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": TEXT[kind]}]
            stop = "end_turn"
        usage = {"input_tokens": pin, "output_tokens": pout, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            return web.json_response({"id": mid, "type": "message", "role": "assistant", "model": model,
                                      "content": content, "stop_reason": stop, "stop_sequence": None,
                                      "usage": usage})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def event(name: str, data: dict[str, Any]) -> None:
            await resp.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        await event("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})
        if kind == "tool_call":
            await event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": TOOLU_ID, "name": "get_weather", "input": {}}})
            for piece in ('{"city": ', '"Paris"}'):
                await event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "input_json_delta", "partial_json": piece}})
        else:
            await event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})
            words = TEXT[kind].split(" ")
            for i, w in enumerate(words):
                await event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "text_delta", "text": w if i == 0 else " " + w}})
        await event("content_block_stop", {"type": "content_block_stop", "index": 0})
        await event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": pout}})
        await event("message_stop", {"type": "message_stop"})
        await resp.write_eof()
        return resp


def dump(outdir: str, scenario: str, spans: Any, logs: Any = None) -> None:
    """Write <scenario>.pb (and <scenario>.logs.pb) with the SDK's own OTLP encoders."""
    import os

    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, f"{scenario}.pb"), "wb") as f:
        f.write(encode_spans(spans).SerializeToString())
    if logs:
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

        with open(os.path.join(outdir, f"{scenario}.logs.pb"), "wb") as f:
            f.write(encode_logs(logs).SerializeToString())
