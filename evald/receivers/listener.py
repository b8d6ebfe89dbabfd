"""``GuardedSite``: an aiohttp site that accepts connections itself, so every connection gets evald's limits.

Used by the OTLP/HTTP receiver and the admin server; the limits, metrics and config keys are in
connection_limits.py. Why a site of its own: asyncio's accept loop (``BaseSelectorEventLoop._accept_connection``,
CPython 3.11) handles EMFILE by logging a traceback through the loop's exception handler, scheduling a retry in 1 s
and then *continuing* its loop of up to ``backlog`` accept() calls, each failing, logging and scheduling again: with
the descriptors gone that was 13,619 log lines/s. It also offers no cap and no per-connection hook.

Here the listening sockets are bound by ``loop.create_server(start_serving=False)`` (same address handling,
``close()``, ``sockets``) and read by our own reader: up to 64 accepts per wake-up, a cap with eviction, EMFILE/ENFILE/
ENOBUFS/ENOMEM answered by a pause with back-off, freeing idle connections, a count and a rate-limited WARNING; any
other accept error is counted and logged (rate-limited), and accepting goes on after 50 ms. Each accepted socket
becomes a transport through ``loop.connect_accepted_socket`` (TLS with a handshake bounded by
``read_header_timeout``).
``guard_middleware`` tells a connection's guard when aiohttp starts and ends a request (its timer changes). No
config keys of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from evald.receivers.connection_limits import TABLE, ConnectionGuard, ListenerState, guard_of
from evald.telemetry import RateLimitedLog

logger = logging.getLogger(__name__)
_log = RateLimitedLog(logger, 30.0)

ACCEPTS_PER_WAKEUP = 64
RESOURCE_ERRORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
PAUSE_MIN, PAUSE_MAX = 0.05, 1.0
EVICT_ON_EXHAUSTION = 16
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def guard_middleware(listener: ListenerState) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        guard = guard_of(listener, request.transport)
        if guard is not None:
            guard.request_started()
        try:
            return await handler(request)
        finally:
            if guard is not None:
                guard.request_finished()

    return middleware


class GuardedSite(web.BaseSite):
    """``web.TCPSite`` with evald's accept loop; ``wrap`` (optional) wraps each aiohttp protocol before the guard
    (the HTTP/2 preface sniffer of wrong_protocol.py)."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, listener: ListenerState, *,
                 ssl_context: Any = None, wrap: Callable[[asyncio.Protocol], asyncio.Protocol] | None = None,
                 backlog: int = 512) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._host, self._port = host, port
        self._listener = listener
        self._wrap = wrap
        self._pause = PAUSE_MIN
        self._paused: asyncio.TimerHandle | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._sockets: list[socket.socket] = []
        self._closing = False

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        return f"{scheme}://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()  # BaseSite.start: registers the site with its runner
        loop = asyncio.get_running_loop()
        sockets = await _bind(loop, self._host, self._port, self._backlog)
        self._sockets = sockets
        self._server = _Listening(sockets)  # what aiohttp reads: ``sockets`` (runner.addresses) and ``close()``
        for sock in sockets:
            self._read(sock)

    async def stop(self) -> None:
        self._closing = True
        if self._paused is not None:
            self._paused.cancel()
        for sock in self._sockets:
            if sock.fileno() >= 0:
                asyncio.get_running_loop().remove_reader(sock.fileno())
        for task in list(self._pending):
            task.cancel()
        await super().stop()

    def _read(self, sock: Any) -> None:
        asyncio.get_running_loop().add_reader(sock.fileno(), self._accept, sock)

    def _accept(self, sock: Any) -> None:
        listener = self._listener
        for _ in range(ACCEPTS_PER_WAKEUP):
            try:
                conn, _addr = sock.accept()
            except (BlockingIOError, InterruptedError):
                self._pause = PAUSE_MIN
                return
            except ConnectionAbortedError:
                continue
            except OSError as err:
                self._accept_failed(sock, err)
                return
            conn.setblocking(False)
            if not listener.make_room():
                listener.count_refused("max_connections")
                _refuse(conn)
                _log.log(logging.WARNING, f"{listener.name}:max_connections", "%s: %d connections, all in a request "
                         "(max_connections): new connections get 503", listener.name, listener.connections)
                continue
            listener.opened()
            task = asyncio.get_running_loop().create_task(self._connect(conn))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    def _accept_failed(self, sock: Any, err: OSError) -> None:
        """Out of descriptors or memory: stop reading the socket for a while, free idle connections, say so once."""
        listener = self._listener
        loop = asyncio.get_running_loop()
        loop.remove_reader(sock.fileno())
        if err.errno not in RESOURCE_ERRORS:  # unexpected: paused briefly too, so it cannot spin
            listener.count_refused("accept_error")
            _log.log(logging.WARNING, f"{listener.name}:accept", "%s: accept() failed: %s", listener.name, err)
            self._paused = loop.call_later(PAUSE_MIN, self._resume, sock)
            return
        listener.count_refused("fd_exhausted")
        freed = TABLE.evict(EVICT_ON_EXHAUSTION)
        _log.log(logging.WARNING, f"{listener.name}:exhausted", "%s: accept() failed (%s, %d connections open "
                 "here): pausing %.2fs, closed %d idle connections; raise the open-file limit (ulimit -n) or lower "
                 "max_connections", listener.name, errno.errorcode.get(err.errno or 0, err), listener.connections,
                 self._pause, freed)
        self._paused = loop.call_later(self._pause, self._resume, sock)
        self._pause = PAUSE_MIN if freed else min(PAUSE_MAX, self._pause * 2)  # back off while nothing can be freed

    def _resume(self, sock: Any) -> None:
        self._paused = None
        if not self._closing and sock.fileno() >= 0:
            self._read(sock)

    async def _connect(self, conn: socket.socket) -> None:
        listener = self._listener
        server = self._runner.server
        assert server is not None
        made: list[ConnectionGuard] = []

        def protocol() -> asyncio.Protocol:
            inner: asyncio.Protocol = server()
            guard = listener.guard(self._wrap(inner) if self._wrap else inner)
            made.append(guard)
            return guard

        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                protocol, conn, ssl=self._ssl_context,
                ssl_handshake_timeout=listener.limits.read_header_timeout if self._ssl_context else None)
        except BaseException as err:  # TLS handshake failed or timed out, or shutdown: the connection is gone
            conn.close()
            if made:
                made[0].release()
            else:
                listener.gone()
            if not isinstance(err, Exception):
                raise


async def _bind(loop: asyncio.AbstractEventLoop, host: str, port: int, backlog: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` as ``loop.create_server`` binds them (every address ``host`` resolves
    to, SO_REUSEADDR, IPv6 sockets v6-only); ``OSError`` if one cannot be bound."""
    infos = await loop.getaddrinfo(host or None, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as err:
                raise OSError(err.errno, f"error while attempting to bind on address {address!r}: "
                              f"{(err.strerror or '').lower()}") from None
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class _Listening(asyncio.AbstractServer):
    """The part of ``asyncio.Server`` aiohttp uses: ``sockets`` and ``close()``."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self.sockets = sockets

    def close(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in self.sockets:
            if sock.fileno() >= 0:
                loop.remove_reader(sock.fileno())
                sock.close()

    async def wait_closed(self) -> None:
        return None

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def is_serving(self) -> bool:
        return any(sock.fileno() >= 0 for sock in self.sockets)

    async def start_serving(self) -> None:
        return None  # GuardedSite reads the sockets itself

    async def serve_forever(self) -> None:
        raise NotImplementedError("GuardedSite serves the sockets")


def _refuse(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.send(_BUSY)
    conn.close()
