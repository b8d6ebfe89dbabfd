"""OTLP/HTTP receiver (aiohttp): ``POST /v1/traces`` and ``POST /v1/logs``.

Config keys (``receivers.otlp.http``, see otlp.py): ``endpoint`` (default ``0.0.0.0:4318``; port 0 binds a free
port, read it from ``bound_port`` after ``start``), ``max_request_body_size`` (default 16 MiB), ``tls`` (an
``ssl.SSLContext`` on the listening socket; ``CERT_REQUIRED`` with ``client_ca_file``), ``auth`` (see auth.py), and
the connection limits ``read_header_timeout``, ``read_timeout``, ``write_timeout``, ``idle_timeout``,
``max_connections`` (connection_limits.py: slow headers and idle connections are closed, a connection cap with
eviction of idle connections, no log flood when descriptors run out; connections are accepted by listener.py).

Requests: ``Content-Type`` ``application/x-protobuf`` or ``application/json`` (OTLP/JSON: hex ids);
``Content-Encoding`` ``gzip`` or ``identity``. The size limit applies to the body as sent and again to the
decompressed body, which is inflated in a streaming way with a bounded output (a gzip bomb costs at most the
limit). aiohttp's own decompression is off so the limit cannot be bypassed.

Answers (bodies in the request's encoding, ``Content-Type`` mirrored):

* 401 with ``WWW-Authenticate: Bearer`` and a ``google.rpc.Status`` (UNAUTHENTICATED) when ``auth`` is set and
  no accepted token came; checked first, before the body is read or decompressed;
* 200 with ``Export*ServiceResponse``; ``partial_success`` set when items were left out (invalid ids, refused
  by the window);
* 400 with a ``google.rpc.Status`` for a malformed or incomplete body (bad protobuf, bad JSON, bad gzip, broken
  chunked encoding) or ``PermanentError``;
* 413 when the body, or its decompressed form, exceeds ``max_request_body_size``;
* 415 for another content type or content encoding (a JSON ``google.rpc.Status`` saying what is accepted);
* 503 with ``Retry-After`` (whole seconds) and a ``RetryInfo`` detail when the window is full (``QueueFullError``);
  while the window refuses, later requests are refused before their body is decoded (ingest.py);
* 408 and the connection closed when the body does not arrive within ``read_timeout`` (outcome ``read_timeout``);
* 500 for any unexpected error (outcome ``internal_error``), logged with its traceback at most every 20 s per kind;
  the server keeps serving. Messages echoed from the input are made encodable (a lone surrogate becomes ``\\ud800``);
* 405 for another method on a known path, 404 for an unknown path (aiohttp's router);
* 400 with a text body naming the gRPC port, and the connection closed, for a connection that opens with the
  HTTP/2 preface (an OTLP/gRPC exporter on the wrong port): counted as ``outcome="wrong_protocol"`` and logged as
  one rate-limited WARNING, not as aiohttp's traceback (wrong_protocol.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
import traceback
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2

from evald.config.base import split_endpoint
from evald.errors import PermanentError, QueueFullError
from evald.interfaces import TraceConsumer
from evald.receivers.auth import Authenticator
from evald.receivers.connection_limits import ListenerState, auto_max_connections
from evald.receivers.ingest import (
    Encoding,
    Ingestor,
    InternalError,
    MalformedRequest,
    Signal,
    encodable,
    export_response,
    retry_info,
    trim,
)
from evald.receivers.listener import GuardedSite, guard_middleware
from evald.receivers.otlp_json import to_json
from evald.receivers.tls import security_label, server_ssl_context
from evald.receivers.wrong_protocol import PrefaceSniffer, WrongProtocolReport
from evald.telemetry import RateLimitedLog, Telemetry

if TYPE_CHECKING:
    from evald.receivers.otlp import OTLPHttpConfig
    from evald.receivers.wal import ReceiverWal

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)

_CONTENT_TYPES: dict[str, Encoding] = {"application/x-protobuf": "protobuf", "application/json": "json"}
_CHUNK = 64 * 1024
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


class BodyTooLarge(Exception):
    """The body, compressed or decompressed, is over ``max_request_body_size``."""


class OTLPHttpReceiver:
    """A ``Source``: serves OTLP/HTTP and hands what it receives to the next consumer."""

    def __init__(self, config: OTLPHttpConfig, telemetry: Telemetry, *, component_id: str = "otlp",
                 grpc_port: Callable[[], int | None] | None = None, wal: ReceiverWal | None = None) -> None:
        """``grpc_port``: the sibling OTLP/gRPC receiver's port, named to OTLP/gRPC senders (None: gRPC is off);
        ``wal``: the receiver's write-ahead log (wal.py), opened and replayed by the service."""
        self.id = f"{component_id}/http"
        self.wal = wal
        self.config = config
        self.bound_port: int | None = None
        self._component_id = component_id
        self._telemetry = telemetry
        self.connections: ListenerState | None = None  # the listener's connections and limits, once started
        self._runner: web.AppRunner | None = None
        self._ingestor: Ingestor | None = None
        self._auth: Authenticator | None = None
        self._closed = False
        self._wrong_protocol = WrongProtocolReport(telemetry, component_id, lambda: self.bound_port, grpc_port)

    async def start(self, next_consumer: TraceConsumer) -> None:
        if self._runner is not None or self._closed:
            return
        self._ingestor = Ingestor(self._component_id, "http", next_consumer, self._telemetry, wal=self.wal)
        if self.config.auth is not None:
            self._auth = Authenticator(self.config.auth, self._telemetry, receiver=self._component_id, transport="http")
        tls = self.config.tls
        ssl_context = server_ssl_context(tls) if tls is not None else None
        listener = self.connections = ListenerState(self.id, self.config, self._telemetry, auto_max_connections())
        app = web.Application(middlewares=[guard_middleware(listener)])
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/logs", self._logs)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               auto_decompress=False, keepalive_timeout=self.config.idle_timeout)
        await runner.setup()
        host, port = split_endpoint(self.config.endpoint)
        on_preface = self._wrong_protocol.http2_preface
        try:
            await GuardedSite(runner, host, port, listener, ssl_context=ssl_context,
                              wrap=lambda inner: PrefaceSniffer(inner, on_preface)).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        addresses = runner.addresses
        self.bound_port = int(addresses[0][1]) if addresses else port
        logger.info("OTLP/HTTP receiver listening on %s:%s (%s%s)", host, self.bound_port, security_label(tls),
                    ", token auth" if self._auth else "", extra={"component": self.id})

    async def shutdown(self, timeout: float) -> None:
        """Stop accepting; in-flight requests get up to ``timeout`` seconds. Idempotent, safe without ``start``."""
        if self._closed:
            return
        self._closed = True
        runner, self._runner = self._runner, None
        if runner is None:
            return
        try:
            async with asyncio.timeout(max(0.1, timeout)):
                await runner.cleanup()
        except TimeoutError:
            logger.warning("%s did not stop within %.1fs", self.id, timeout, extra={"component": self.id})

    async def _traces(self, request: web.Request) -> web.Response:
        return await self._export(request, "traces")

    async def _logs(self, request: web.Request) -> web.Response:
        return await self._export(request, "logs")

    async def _export(self, request: web.Request, signal: Signal) -> web.Response:
        try:
            return await self._answer(request, signal)
        except Exception as err:  # e.g. an answer that cannot be encoded: never aiohttp's traceback per request
            assert self._ingestor is not None
            self._ingestor.count_request("internal_error")
            _errors.log(logging.ERROR, f"{self.id}:{type(err).__name__}", "%s: unexpected error in %s export: %s",
                        self.id, signal, traceback.format_exc())
            return web.Response(status=500, text=f"internal error: {type(err).__name__}")

    async def _answer(self, request: web.Request, signal: Signal) -> web.Response:
        ingestor = self._ingestor
        assert ingestor is not None
        encoding = _CONTENT_TYPES.get(request.content_type.lower())
        if self._auth is not None:
            api_key = request.headers.get(self._auth.api_key_header) if self._auth.api_key_header else None
            reason = self._auth.check(request.headers.get("Authorization"), api_key)
            if reason is not None:
                text = self._auth.refuse(reason, request.remote)
                return _status(401, code_pb2.UNAUTHENTICATED, text, encoding or "json", None, _CHALLENGE)
        if encoding is None:
            ingestor.count_request("unsupported")
            accepted = " or ".join(_CONTENT_TYPES)
            text = f"unsupported Content-Type {request.content_type!r}: use {accepted}"
            return _status(415, code_pb2.INVALID_ARGUMENT, text, "json")
        coding = request.headers.get("Content-Encoding", "identity").strip().lower() or "identity"
        if coding not in ("identity", "gzip"):
            ingestor.count_request("unsupported")
            text = f"unsupported Content-Encoding {coding!r}: use gzip or identity"
            return _status(415, code_pb2.INVALID_ARGUMENT, text, encoding)
        limit = self.config.max_request_body_size
        try:
            try:
                async with asyncio.timeout(self.config.read_timeout):
                    body = await read_body(request, limit, gzip=coding == "gzip")
            except TimeoutError:
                ingestor.count_request("read_timeout")
                text = f"request body not received within read_timeout ({self.config.read_timeout:g}s)"
                response = _status(408, code_pb2.DEADLINE_EXCEEDED, text, encoding, None, {"Connection": "close"})
                response.force_close()
                await response.prepare(request)
                await response.write_eof()
                request.protocol.force_close()  # now: aiohttp would otherwise linger up to 10 s reading the body
                return response
            rejected, message = await ingestor.ingest_body(body, encoding, signal)
        except BodyTooLarge as err:
            ingestor.count_request("too_large")
            return _status(413, code_pb2.RESOURCE_EXHAUSTED, str(err), encoding)
        except MalformedRequest as err:
            ingestor.count_request("invalid_argument")
            return _status(400, code_pb2.INVALID_ARGUMENT, trim(str(err)), encoding)
        except (ConnectionError, web.RequestPayloadError) as err:  # the client went away or sent a broken body
            ingestor.count_request("incomplete")
            return _status(400, code_pb2.INVALID_ARGUMENT, f"incomplete request body: {err}", encoding)
        except QueueFullError as err:
            seconds = max(1, math.ceil(err.retry_after))
            detail = any_pb2.Any()
            detail.Pack(retry_info(err.retry_after))
            return _status(503, code_pb2.UNAVAILABLE, trim(str(err)), encoding, [detail], {"Retry-After": str(seconds)})
        except PermanentError as err:
            return _status(400, code_pb2.INVALID_ARGUMENT, trim(str(err)), encoding)
        except InternalError as err:  # counted by the ingestor
            _errors.log(logging.ERROR, f"{self.id}:{err.kind}", "%s: unexpected error in %s export: %s",
                        self.id, signal, traceback.format_exc())
            return _status(500, code_pb2.INTERNAL, f"internal error: {err.kind}", encoding)
        return _encoded(200, export_response(signal, rejected, message), encoding)


async def read_body(request: web.Request, limit: int, *, gzip: bool) -> bytes:
    """The request body, at most ``limit`` bytes both as sent and after gzip; ``MalformedRequest`` if bad gzip."""
    if request.content_length is not None and request.content_length > limit:
        raise BodyTooLarge(f"request body of {request.content_length} bytes exceeds the limit of {limit} bytes")
    received = 0
    raw = bytearray()
    inflater = _BoundedGunzip(limit) if gzip else None
    async for chunk in request.content.iter_chunked(_CHUNK):
        received += len(chunk)
        if received > limit:
            raise BodyTooLarge(f"request body exceeds the limit of {limit} bytes")
        if inflater is not None:
            inflater.feed(chunk)
        else:
            raw += chunk
    return inflater.finish() if inflater is not None else bytes(raw)


class _BoundedGunzip:
    """Streaming gzip decoder (multi-member aware) that never produces more than ``limit + 1`` bytes."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._out = bytearray()
        self._new_member()

    def _new_member(self) -> None:
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._in_member = False

    def feed(self, data: bytes) -> None:
        while data:
            self._in_member = True
            try:
                self._out += self._inflater.decompress(data, self._limit + 1 - len(self._out))
            except zlib.error as err:
                raise MalformedRequest(f"invalid gzip body: {err}") from None
            if len(self._out) > self._limit:
                raise BodyTooLarge(f"decompressed request body exceeds the limit of {self._limit} bytes")
            data = b""
            if self._inflater.eof:  # another gzip member may follow
                data = self._inflater.unused_data
                self._new_member()

    def finish(self) -> bytes:
        if self._in_member:
            raise MalformedRequest("invalid gzip body: truncated")
        return bytes(self._out)


def _status(
    http_status: int,
    code: int,
    message: str,
    encoding: Encoding,
    details: list[any_pb2.Any] | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    status = status_pb2.Status(code=code, message=encodable(message), details=details or [])
    return _encoded(http_status, status, encoding, headers)


def _encoded(
    http_status: int, message: Message, encoding: Encoding, headers: dict[str, str] | None = None
) -> web.Response:
    if encoding == "json":
        body, content_type = to_json(message), "application/json"
    else:
        body, content_type = message.SerializeToString(), "application/x-protobuf"
    return web.Response(status=http_status, body=body, content_type=content_type, headers=headers)
