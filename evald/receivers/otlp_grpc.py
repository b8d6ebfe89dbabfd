"""OTLP/gRPC receiver (``grpc.aio``): ``TraceService/Export`` and ``LogsService/Export``.

Config keys (``receivers.otlp.grpc``, see otlp.py): ``endpoint`` (default ``0.0.0.0:4317``; port 0 binds a free
port, read it from ``bound_port`` after ``start``), ``max_recv_msg_size_mib`` (default 16, applied after gzip
decompression), ``max_concurrent_streams`` (default 100), ``max_connections`` and ``keepalive`` (grpc_limits.py:
idle and age limits, ping policy, a connection cap, a 10 s handshake deadline), ``tls``
(``grpc.ssl_server_credentials``; with ``client_ca_file`` the handshake requires a client certificate), ``auth`` (a
server interceptor: a call without an accepted token gets ``UNAUTHENTICATED`` before its message is read; see
auth.py).

Requests are taken as raw bytes and decoded by ``Ingestor.ingest_body`` (not by gRPC), so a malformed body gets
a clear INVALID_ARGUMENT instead of gRPC's generic deserialization error.

Answers:

* success: empty ``Export*ServiceResponse``; items left out (invalid ids, refused by the window) ->
  ``partial_success{rejected_spans|rejected_log_records, error_message}`` (senders do not retry it);
* undecodable protobuf, or ``PermanentError`` from the consumer -> ``INVALID_ARGUMENT`` with the reason;
* ``QueueFullError`` -> ``UNAVAILABLE`` with ``google.rpc.RetryInfo{retry_delay}`` both as a status detail
  (``grpc-status-details-bin``, read by Go senders) and as the ``google.rpc.retryinfo-bin`` trailer (read by
  opentelemetry-python), so OTel exporters back off and retry;
* request larger than ``max_recv_msg_size_mib`` -> ``RESOURCE_EXHAUSTED`` (by gRPC itself);
* any other exception -> ``INTERNAL``, logged with its traceback at most every 20 s per kind; the server keeps
  serving.

HTTP/1 (an OTLP/HTTP exporter on this port) is closed by grpc-core before any Python code sees it: it cannot be
counted or logged here (what was tried: wrong_protocol.py). The reverse case, gRPC on the HTTP port, is handled.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evald.config.base import split_endpoint
from evald.errors import PermanentError, QueueFullError
from evald.interfaces import TraceConsumer
from evald.receivers.auth import Authenticator, GrpcAuthInterceptor
from evald.receivers.grpc_limits import grpc_limit_options
from evald.receivers.ingest import (
    Ingestor,
    InternalError,
    MalformedRequest,
    Signal,
    export_response,
    retry_info,
    trim,
)
from evald.receivers.tls import security_label
from evald.telemetry import RateLimitedLog, Telemetry

if TYPE_CHECKING:
    from evald.receivers.otlp import OTLPGrpcConfig
    from evald.receivers.tls import ServerTLSConfig
    from evald.receivers.wal import ReceiverWal

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)

TRACE_SERVICE = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name
LOGS_SERVICE = logs_service_pb2.DESCRIPTOR.services_by_name["LogsService"].full_name
_MIB = 1024 * 1024

Trailers = tuple[tuple[str, str | bytes], ...]


class OTLPGrpcReceiver:
    """A ``Source``: serves OTLP/gRPC and hands what it receives to the next consumer."""

    def __init__(self, config: OTLPGrpcConfig, telemetry: Telemetry, *, component_id: str = "otlp",
                 wal: ReceiverWal | None = None) -> None:
        self.id = f"{component_id}/grpc"
        self.wal = wal  # the receiver's write-ahead log (wal.py), opened and replayed by the service
        self.config = config
        self.bound_port: int | None = None
        self._component_id = component_id
        self._telemetry = telemetry
        self._server: Any = None  # grpc.aio.Server
        self._ingestor: Ingestor | None = None
        self._closed = False

    async def start(self, next_consumer: TraceConsumer) -> None:
        if self._server is not None or self._closed:
            return
        self._ingestor = Ingestor(self._component_id, "grpc", next_consumer, self._telemetry, wal=self.wal)
        options: list[tuple[str, int]] = [
            ("grpc.max_receive_message_length", self.config.max_recv_msg_size_mib * _MIB),
            ("grpc.max_send_message_length", 4 * _MIB),
            ("grpc.so_reuseport", 0),  # a port already in use is an error, not silently shared
        ]
        options += grpc_limit_options(self.config.keepalive, self.config.max_concurrent_streams,
                                      self.config.max_connections)
        interceptors: list[Any] = []
        if self.config.auth is not None:
            auth = Authenticator(self.config.auth, self._telemetry, receiver=self._component_id, transport="grpc")
            interceptors.append(GrpcAuthInterceptor(auth))
        credentials = _credentials(self.config.tls) if self.config.tls is not None else None
        server = grpc.aio.server(options=options, interceptors=interceptors)
        server.add_generic_rpc_handlers(self._handlers())
        host, port = split_endpoint(self.config.endpoint)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            if credentials is None:
                bound = server.add_insecure_port(address)
            else:
                bound = server.add_secure_port(address, credentials)
            if not bound:
                raise RuntimeError("port not bound")
            await server.start()
        except RuntimeError as err:  # recent grpcio raises instead of returning 0
            await server.stop(None)
            raise OSError(f"{self.id}: cannot listen on {self.config.endpoint}: {err}") from None
        self._server = server
        self.bound_port = int(bound)
        logger.info("OTLP/gRPC receiver listening on %s:%s (%s%s)", host, bound, security_label(self.config.tls),
                    ", token auth" if self.config.auth else "", extra={"component": self.id})

    async def shutdown(self, timeout: float) -> None:
        """Stop accepting; in-flight calls get up to ``timeout`` seconds. Idempotent, safe without ``start``."""
        if self._closed:
            return
        self._closed = True
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace=max(0.0, timeout))

    def _handlers(self) -> tuple[Any, ...]:
        def export(fn: Callable[[bytes, Any], Awaitable[bytes]]) -> dict[str, Any]:
            # no (de)serializers: the handler gets and returns raw bytes
            return {"Export": grpc.unary_unary_rpc_method_handler(fn)}

        return (
            grpc.method_handlers_generic_handler(TRACE_SERVICE, export(self._export_traces)),
            grpc.method_handlers_generic_handler(LOGS_SERVICE, export(self._export_logs)),
        )

    async def _export_traces(self, body: bytes, context: Any) -> bytes:
        return await self._export(body, context, "traces")

    async def _export_logs(self, body: bytes, context: Any) -> bytes:
        return await self._export(body, context, "logs")

    async def _export(self, body: bytes, context: Any, signal: Signal) -> bytes:
        ingestor = self._ingestor
        assert ingestor is not None
        trailers: Trailers = ()
        try:
            rejected, message = await ingestor.ingest_body(body, "protobuf", signal)
        except MalformedRequest as err:
            ingestor.count_request("invalid_argument")
            code, details = grpc.StatusCode.INVALID_ARGUMENT, trim(str(err))
        except QueueFullError as err:
            code, details, trailers = _unavailable(err)
        except PermanentError as err:
            code, details = grpc.StatusCode.INVALID_ARGUMENT, trim(str(err))
        except Exception as err:  # InternalError was counted by the ingestor; anything else is counted here
            kind = err.kind if isinstance(err, InternalError) else type(err).__name__
            if not isinstance(err, InternalError):
                ingestor.count_request("internal_error")
            _errors.log(logging.ERROR, f"{self.id}:{kind}", "%s: unexpected error in %s Export: %s",
                        self.id, signal, traceback.format_exc())
            code, details = grpc.StatusCode.INTERNAL, f"internal error: {kind}"
        else:
            return export_response(signal, rejected, message).SerializeToString()
        await context.abort(code, details, trailing_metadata=trailers)
        raise AssertionError("context.abort returns only by raising")


def _credentials(tls: ServerTLSConfig) -> grpc.ServerCredentials:
    from evald.receivers.tls_reload import grpc_server_credentials  # reloads with tls.reload_interval

    return grpc_server_credentials(tls)


def _unavailable(err: QueueFullError) -> tuple[grpc.StatusCode, str, Trailers]:
    info = retry_info(err.retry_after)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = rpc_status.to_status(
        status_pb2.Status(code=code_pb2.UNAVAILABLE, message=trim(str(err)), details=[detail])
    )
    trailers: Trailers = (*status.trailing_metadata, ("google.rpc.retryinfo-bin", info.SerializeToString()))
    return status.code, status.details, trailers
