"""A local stand-in for Langfuse's ``POST /api/public/scores`` (aiohttp on 127.0.0.1), and the SDK-side checks.

The server records every request (time, auth, JSON body), answers with planned responses first (e.g. 429 with
Retry-After, 500s) and then like Langfuse: 202 ``{"message": "Accepted"}`` for an array, 200 ``{"id"}`` for one
object. With ``objects_only=True`` it is a server that takes one object per request, as the Langfuse server code
of August 2026 (HEAD 6275144) does: an array gets the 400 its zod body schema gives, ``{"message": "Invalid request
data", "error": [<issues>]}`` with root-level ``invalid_type`` issues expecting an object (the issues as zod 4.3.6
reports them for that schema, checked with zod itself). ``delay`` holds every answer that long, so concurrent
requests overlap; ``max_concurrent`` is the most requests it ever had open at once. ``stop()``/``start()`` take it
down and bring it back on the same port. Bodies are validated with the
Langfuse Python SDK's own generated request models through its parsing helper (``parse_obj_as``), which maps the
camelCase wire names; plain pydantic validation would silently park them in ``model_extra``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from langfuse.api.core.pydantic_utilities import parse_obj_as
from langfuse.api.scores.types.create_score_request import CreateScoreRequest
from langfuse.api.scores.types.create_scores_request import CreateScoresRequest

PUBLIC_KEY = "pk-lf-test-1234"
SECRET_KEY = "sk-lf-test-5678"


@dataclass
class Recorded:
    at: float
    status: int
    authorization: str | None
    body: Any

    @property
    def scores(self) -> list[dict[str, Any]]:
        return self.body if isinstance(self.body, list) else [self.body]


@dataclass
class Planned:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


class FakeLangfuse:
    def __init__(self, public_key: str = PUBLIC_KEY, secret_key: str = SECRET_KEY, *, objects_only: bool = False,
                 delay: float = 0.0) -> None:
        self.objects_only = objects_only
        self.delay = delay
        self.concurrent = 0
        self.max_concurrent = 0
        token = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()
        self.expected_auth = f"Basic {token}"
        self.requests: list[Recorded] = []
        self.planned: list[Planned] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def plan(self, *responses: Planned) -> None:
        self.planned.extend(responses)

    async def start(self) -> FakeLangfuse:
        app = web.Application()
        app.router.add_post("/api/public/scores", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        if not self.port:
            server = site._server
            assert server is not None
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.concurrent += 1
        self.max_concurrent = max(self.max_concurrent, self.concurrent)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            return await self._answer(request)
        finally:
            self.concurrent -= 1

    async def _answer(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization")
        body = json.loads(await request.read())
        payload: Any
        if auth != self.expected_auth:
            status, headers, payload = 401, {}, {"message": "Invalid credentials"}
        elif self.planned:
            p = self.planned.pop(0)
            status, headers, payload = p.status, p.headers, p.body if p.body is not None else {"message": "planned"}
        elif self.objects_only and not isinstance(body, dict):
            status, headers, payload = 400, {}, {"message": "Invalid request data", "error": [
                {"expected": "object", "code": "invalid_type", "path": [],
                 "message": f"Invalid input: expected object, received {_zod_type(body)}"},
                {"code": "invalid_type", "expected": "object", "path": [],
                 "message": f"Invalid input: expected object, received {_zod_type(body)}"}]}
        elif isinstance(body, list):
            status, headers, payload = 202, {}, {"message": "Accepted"}
        else:
            status, headers, payload = 200, {}, {"id": body.get("id", "")}
        self.requests.append(Recorded(time.monotonic(), status, auth, body))
        return web.json_response(payload, status=status, headers=headers)

    # ---- what arrived ----------------------------------------------------------------------------------------

    @property
    def accepted(self) -> list[dict[str, Any]]:
        """Score bodies of requests answered 2xx (what Langfuse would have stored)."""
        return [s for r in self.requests if 200 <= r.status < 300 for s in r.scores]

    def accepted_ids(self) -> list[str]:
        return [s["id"] for s in self.accepted]

    def duplicates(self) -> dict[str, int]:
        return {k: n for k, n in Counter(self.accepted_ids()).items() if n > 1}


def _zod_type(value: Any) -> str:
    return "array" if isinstance(value, list) else "null" if value is None else type(value).__name__


def sdk_validate(body: Any) -> list[CreateScoreRequest]:
    """Parse a request body with the SDK's models the way the SDK parses; fail on fields the SDK does not know."""
    models = parse_obj_as(CreateScoresRequest, body) if isinstance(body, list) else [
        parse_obj_as(CreateScoreRequest, body)]
    for model in models:
        assert not model.model_extra, f"fields unknown to the Langfuse SDK model: {sorted(model.model_extra or {})}"
    return list(models)
