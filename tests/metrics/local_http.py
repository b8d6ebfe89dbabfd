"""A real HTTP server on 127.0.0.1 for tests of metrics that leave the process (webhook, embedding providers).

``serve(handler)`` starts an aiohttp server on a free port, records every request it receives, and stops it
when the ``async with`` block ends (a handler still running, e.g. one sleeping to provoke a client timeout,
is cancelled). ``unused_port()`` gives a port nothing listens on (connection refused).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class LocalServer:
    base_url: str
    requests: list[RecordedRequest] = field(default_factory=list)


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[LocalServer]:
    server = LocalServer(base_url="")

    async def recording(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        server.requests.append(RecordedRequest(request.method, request.path, dict(request.headers), body))
        return await handler(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", recording)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    server.base_url = f"http://{host}:{port}"
    try:
        yield server
    finally:
        await runner.cleanup()  # handler_cancellation: a handler still sleeping is cancelled


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
