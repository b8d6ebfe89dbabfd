"""OTLP/gRPC sent to the OTLP/HTTP port: recognised, answered, counted, and logged once (never as a traceback).

The OTLP/HTTP receiver's ``GuardedSite`` (listener.py) wraps each connection's aiohttp protocol in a
``PrefaceSniffer``, which looks only at the first bytes of a connection. ``PRI * HTTP/2.0\\r\\n`` opens the HTTP/2
connection preface (RFC 9113 section 3.4), what a gRPC client such as an OTLP/gRPC exporter sends first. Anything
else goes to aiohttp unchanged, and from then on the sniffer only forwards calls. Without this, aiohttp's parser
fails on the preface and ``aiohttp.server`` logs an ERROR with a traceback per connection, while the sender retries.

On the preface the connection gets ``HTTP/1.1 400`` with a text body naming the gRPC port, and is closed. grpc clients
report that as "Trying to connect an http1.x server (HTTP status 400)" and back off. An HTTP/2 GOAWAY carrying the
same text was tried: grpc-core reconnected at once, dozens of times a second, and the exporter ended with a bare
DEADLINE_EXCEEDED.

``WrongProtocolReport`` counts each such connection as ``evald_receiver_requests_total{outcome="wrong_protocol"}`` and
logs one WARNING per receiver at most every ``interval`` seconds (60 s), with how many it left out: "this looks like
OTLP/gRPC; send it to :4317" (the gRPC receiver's bound port), or how to proceed when gRPC is disabled. No config keys.

Over TLS the sniffer sees the decrypted bytes. A gRPC client over TLS usually fails earlier, in the handshake: it
requires ALPN ``h2``, which this server does not offer. That failure happens before the sniffer and is not counted.

The other direction, HTTP/1 on the OTLP/gRPC port, cannot be observed: grpc-core reads the connection in C. A
connection that does not start with the preface is closed there; only grpc's own ``http`` trace mentions it
("Connect string mismatch"). No grpc.aio server interceptor or callback sees a connection that never becomes an RPC.
Tried: a server interceptor, ``GRPC_VERBOSITY=debug`` (silent), and ``GRPC_TRACE=http`` (C logs on stderr only).
Seeing it would mean a Python proxy in front of every gRPC byte.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)

#: The first line of the HTTP/2 connection preface (the whole preface is ``PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n``).
HTTP2_PREFACE_START = b"PRI * HTTP/2.0\r\n"
OUTCOME = "wrong_protocol"


class WrongProtocolReport:
    """Counts and logs (rate-limited) OTLP/gRPC connections to one OTLP/HTTP receiver. ``grpc_port`` gives the port
    of the sibling gRPC receiver once it is bound (None: gRPC is disabled)."""

    def __init__(self, telemetry: Telemetry, component_id: str, http_port: Callable[[], int | None],
                 grpc_port: Callable[[], int | None] | None, interval: float = 60.0) -> None:
        self._counter = telemetry.requests.labels(component_id, "http", OUTCOME)
        self._id = f"{component_id}/http"
        self._http_port = http_port
        self._grpc_port = grpc_port
        self._log = RateLimitedLog(logger, interval)

    def advice(self) -> str:
        port = self._grpc_port() if self._grpc_port is not None else None
        if port is not None:
            return f"this looks like OTLP/gRPC; send it to :{port} (or use OTLP/HTTP: protocol http/protobuf)"
        return ("this looks like OTLP/gRPC, which is not enabled here: use OTLP/HTTP (protocol http/protobuf, "
                "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf) or enable receivers.otlp.grpc")

    def http2_preface(self, transport: asyncio.BaseTransport) -> str:
        """Count one connection that opened with the HTTP/2 preface, log (rate-limited); the answer's text."""
        self._counter.inc()
        peer = transport.get_extra_info("peername")
        who = peer[0] if isinstance(peer, tuple) and peer else "a client"
        advice = self.advice()
        self._log.log(logging.WARNING, self._id, "%s: %s sent an HTTP/2 connection preface to the OTLP/HTTP port %s: "
                      "%s", self._id, who, self._http_port(), advice)
        return f"this is an OTLP/HTTP port (HTTP/1.1); {advice}\n"


class PrefaceSniffer(asyncio.Protocol):
    """Wraps one connection's aiohttp protocol; refuses the connection if it opens with the HTTP/2 preface."""

    def __init__(self, inner: asyncio.Protocol, on_preface: Callable[[asyncio.BaseTransport], str]) -> None:
        self._inner = inner
        self._on_preface = on_preface
        self._transport: asyncio.Transport | None = None
        self._head = b""
        self._sniffing = True
        self._refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._sniffing:
            head = self._head + data
            if len(head) < len(HTTP2_PREFACE_START) and HTTP2_PREFACE_START.startswith(head):
                self._head = head  # too short to tell yet
                return
            self._sniffing, self._head = False, b""
            if head.startswith(HTTP2_PREFACE_START):
                self._refuse()
                return
            data = head
        self._inner.data_received(data)

    def _refuse(self) -> None:
        transport = self._transport
        assert transport is not None
        self._refused = True
        body = self._on_preface(transport).encode()
        head = (f"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        transport.write(head + body)
        transport.close()

    def eof_received(self) -> bool | None:
        if self._sniffing and self._head and not self._refused:
            self._sniffing, head, self._head = False, self._head, b""
            self._inner.data_received(head)
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

