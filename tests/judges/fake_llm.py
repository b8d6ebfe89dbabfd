"""A scripted OpenAI Chat Completions + Anthropic Messages server on 127.0.0.1, for the real SDKs.

Each request takes the next ``Reply`` from ``script`` (then ``default``): a verdict text with usage, an HTTP
status (with ``Retry-After``), a hang, a delay, a body that is not JSON, or any ``raw_body``. ``received`` keeps
every request body; ``peers`` the client address of every connection a request came on (connection reuse).

Billing, as a provider bills: every answer with status 200 (readable or not) bills ``input_tokens`` +
``output_tokens`` (``bill_worst``: the request's prompt and schema bytes and its ``max_tokens``, the most a
byte-level tokenizer can bill) into ``billed_tokens`` when its ``delay`` has passed, whether or not the client is still
there to read it; a hang or an error status bills nothing. What the answer *reports* is ``usage``: by default the
billed counts, else a pair of raw JSON values (``OMIT`` leaves a count out, a float NaN is sent as ``NaN``) or
``None`` for no usage object at all.
Structured output: an Anthropic request that forces a tool gets the verdict as that tool's ``tool_use`` input
(unless the reply is ``plain_text`` or not a JSON object); with ``reject_json_schema`` an OpenAI request whose
``response_format`` is ``json_schema`` is answered 400, as by a server without structured output.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from evald.judges.config import JudgeConfig
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeLimiter
from evald.judges.telemetry import JudgeTelemetry
from tests.metrics.local_http import LocalServer, serve

OMIT = object()
#: tokens a forced Anthropic tool adds to the input (its tool-use system prompt: about what Anthropic documents)
ANTHROPIC_TOOL_PROMPT = 346
BILLED = "billed"


@dataclass
class Reply:
    text: str = '{"reasoning": "fine", "score": 5}'
    input_tokens: int = 100
    output_tokens: int = 10
    usage: Any = BILLED
    bill_worst: bool = False
    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0
    hang: bool = False
    broken_body: bool = False
    plain_text: bool = False
    raw_body: str | None = None


@dataclass
class FakeLLM:
    script: deque[Reply] = field(default_factory=deque)
    default: Reply = field(default_factory=Reply)
    server: LocalServer | None = None
    in_flight: int = 0
    peak_in_flight: int = 0
    reject_json_schema: bool = False
    peers: set[tuple[str, int]] = field(default_factory=set)
    billed_tokens: int = 0
    answers: int = 0
    _answered: asyncio.Event = field(default_factory=asyncio.Event)

    def then(self, *replies: Reply) -> FakeLLM:
        self.script.extend(replies)
        return self

    @property
    def received(self) -> list[dict[str, Any]]:
        assert self.server is not None
        return [r.json() for r in self.server.requests]

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        if request.transport is not None:
            self.peers.add(tuple(request.transport.get_extra_info("peername"))[:2])
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._reply(request)
        finally:
            self.in_flight -= 1

    async def _reply(self, request: web.Request) -> web.StreamResponse:
        if self.reject_json_schema and await _asks_json_schema(request):
            return web.json_response({"error": {"message": "json_schema is not supported", "type": "x"}}, status=400)
        reply = self.script.popleft() if self.script else self.default
        if reply.hang:
            await asyncio.sleep(3600)
        body = await request.json()
        billed = _billed(body, reply)
        if reply.status == 200:  # billed when the answer is ready, even if the client has gone by then
            asyncio.get_running_loop().call_later(reply.delay, self._bill, sum(billed))
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            headers = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
            return web.json_response({"error": {"message": "scripted", "type": "x"}}, status=reply.status,
                                     headers=headers)
        if reply.broken_body:
            return web.Response(text="{not json", content_type="application/json")
        if reply.raw_body is not None:
            return web.Response(text=reply.raw_body, content_type="application/json")
        reported = billed if reply.usage == BILLED else reply.usage
        if request.path.endswith("/messages"):
            content, stop = _anthropic_content(body, reply)
            return web.json_response({
                "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                "content": content, "stop_reason": stop, "stop_sequence": None,
                **_usage(reported, "input_tokens", "output_tokens"),
            })
        return web.json_response({
            "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                         "finish_reason": "stop"}],
            **_usage(reported, "prompt_tokens", "completion_tokens"),
        })

    def _bill(self, tokens: int) -> None:
        self.billed_tokens += tokens
        self.answers += 1
        self._answered.set()

    async def until_answered(self, answers: int, timeout: float = 5.0) -> None:
        """Wait (bounded) until the stand-in has answered (and billed) ``answers`` requests in all."""
        async with asyncio.timeout(timeout):
            while self.answers < answers:
                self._answered.clear()
                await self._answered.wait()


def _billed(body: dict[str, Any], reply: Reply) -> tuple[int, int]:
    """What one answer bills: the reply's counts, or (``bill_worst``) a token per byte of the prompt and of the
    verdict schema (plus a tool-use system prompt for a forced Anthropic tool) and ``max_tokens``."""
    if not reply.bill_worst:
        return reply.input_tokens, reply.output_tokens
    texts = [text for text in [body.get("system"), *(m["content"] for m in body["messages"])] if text]
    schemas = [t["input_schema"] for t in body.get("tools") or ()]
    if (response_format := body.get("response_format") or {}).get("type") == "json_schema":
        schemas.append(response_format["json_schema"]["schema"])
    texts += [json.dumps(schema) for schema in schemas]
    tool_prompt = ANTHROPIC_TOOL_PROMPT if body.get("tools") else 0
    return len("\n".join(texts).encode("utf-8")) + tool_prompt, int(body["max_tokens"])


def _usage(reported: Any, input_key: str, output_key: str) -> dict[str, Any]:
    if reported is None:
        return {}
    counts = {key: value for key, value in zip((input_key, output_key), reported, strict=True) if value is not OMIT}
    return {"usage": counts}


async def _asks_json_schema(request: web.Request) -> bool:
    if not request.path.endswith("/chat/completions"):
        return False
    return bool(((await request.json()).get("response_format") or {}).get("type") == "json_schema")


def _anthropic_content(body: dict[str, Any], reply: Reply) -> tuple[list[dict[str, Any]], str]:
    forced = (body.get("tool_choice") or {}).get("name")
    if forced and not reply.plain_text:
        try:
            verdict = json.loads(reply.text)
        except ValueError:
            verdict = None
        if isinstance(verdict, dict):
            return [{"type": "tool_use", "id": "toolu_1", "name": forced, "input": verdict}], "tool_use"
    return [{"type": "text", "text": reply.text}], "end_turn"


@asynccontextmanager
async def fake_llm() -> AsyncIterator[FakeLLM]:
    llm = FakeLLM()
    async with serve(llm.handle) as server:
        llm.server = server
        yield llm


def judge_config(llm: FakeLLM, provider: str = "openai", **overrides: Any) -> JudgeConfig:
    """A judge on ``llm``; the verdict cache is off unless ``cache=`` says otherwise (tests that script a
    different reply for the same case must reach the server every time)."""
    base_url = f"{llm.base_url}/v1" if provider == "openai" else llm.base_url
    settings: dict[str, Any] = {
        "provider": provider, "model": "gpt-4o-mini" if provider == "openai" else "claude-haiku-4-5",
        "api_key": "sk-test-not-a-real-key", "base_url": base_url, "timeout": 2, "max_retries": 2,
        "retry_initial_interval": 0.01, "cache": {"enabled": False}, **overrides,
    }
    return JudgeConfig.model_validate(settings)


def make_judge(config: JudgeConfig, telemetry: JudgeTelemetry, name: str = "default") -> Judge:
    return Judge(name, config, telemetry, limiter=JudgeLimiter(name, config, telemetry))


def user_text(body: dict[str, Any]) -> str:
    """All the prompt text of one recorded request (OpenAI or Anthropic shape)."""
    return json.dumps(body, ensure_ascii=False)
