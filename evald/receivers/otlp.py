"""The ``otlp`` receiver: config model and factory for the OTLP/gRPC and OTLP/HTTP servers.

Config keys (``receivers: otlp[/<name>]:``), Collector-style::

    receivers:
      otlp:
        grpc:
          endpoint: 0.0.0.0:4317        # host:port; port 0 binds a free port (see ``bound_port``)
          max_recv_msg_size_mib: 16     # largest request after decompression; larger -> RESOURCE_EXHAUSTED
          max_concurrent_streams: 100   # per HTTP/2 connection; 0 = unlimited
          max_connections: 0            # 0 = auto (a share of the open-file limit); see grpc_limits.py
          keepalive: {server_parameters: {...}, enforcement_policy: {...}}   # Collector keys: grpc_limits.py
          tls: null                     # {cert_file, key_file, client_ca_file, min_version, reload_interval, ...}
          auth: null                    # {bearer_tokens, token_files, api_key_header}: see auth.py
        http:
          endpoint: 0.0.0.0:4318
          max_request_body_size: 16777216   # bytes (16 MiB), enforced before AND after gzip; larger -> 413
          read_header_timeout: 10s          # connection limits: see connection_limits.py
          read_timeout: 30s
          write_timeout: 30s
          idle_timeout: 60s
          max_connections: 0                # 0 = auto (a share of the open-file limit)
          tls: null                         # same keys as for grpc
          auth: null
        wal: null                           # {directory, max_megabytes, fsync}: write-ahead log, see wal.py

The Collector's shape ``otlp: {protocols: {grpc: ..., http: ...}}`` is read too (evald/config/collector_shape.py:
there only the protocols listed are served). A protocol left out (or ``otlp: {}``) is enabled with its defaults;
``grpc: null`` / ``http: null`` disables it; disabling both is a validation error. Each enabled protocol is a
separate ``Source`` with id ``<component_id>/grpc`` or ``<component_id>/http``; its self-metrics carry
``receiver=<component_id>`` and ``transport=grpc|http``.

Failure semantics (details in otlp_grpc.py / otlp_http.py): spans with invalid ids -> partial success;
malformed request -> INVALID_ARGUMENT / 400; window full -> UNAVAILABLE + RetryInfo / 503 + Retry-After;
unexpected error -> INTERNAL / 500, logged (rate-limited), the server keeps serving. ``start`` raises
``OSError`` when the endpoint cannot be bound. With ``tls`` a client that fails the handshake is dropped by the
server; with ``auth`` a request without an accepted token gets UNAUTHENTICATED / 401 before its body is read
(docs/security.md). With ``wal`` an answered request is on disk first and a restarted evald replays what was not
yet exported (wal.py). OTLP/gRPC sent to the HTTP port gets 400 naming the gRPC port, is counted as
``outcome="wrong_protocol"`` and logged once a minute (wrong_protocol.py; the reverse cannot be seen, see there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Endpoint
from evald.receivers.auth import ReceiverAuthConfig
from evald.receivers.connection_limits import ListenerLimitsConfig
from evald.receivers.grpc_limits import GrpcKeepaliveConfig
from evald.receivers.tls import ServerTLSConfig
from evald.receivers.wal import ReceiverWalConfig
from evald.telemetry import Telemetry

if TYPE_CHECKING:
    from evald.interfaces import Source

MIB = 1024 * 1024


class OTLPGrpcConfig(ComponentConfig):
    endpoint: Endpoint = Field("0.0.0.0:4317", description="Where OTLP/gRPC is served; port 0 picks a free port.")
    max_recv_msg_size_mib: int = Field(
        16, gt=0, le=2047, description="Largest request after decompression, in MiB (larger: RESOURCE_EXHAUSTED)."
    )
    max_concurrent_streams: int = Field(100, ge=0, description="Concurrent calls per connection; 0 = unlimited.")
    max_connections: int = Field(
        0, ge=0, description="Open connections (more are closed on accept); 0 = auto: a quarter of (RLIMIT_NOFILE - "
        "256), 16..8192.")
    keepalive: GrpcKeepaliveConfig = Field(
        GrpcKeepaliveConfig(), description="Idle/age limits and ping policy (the Collector's keepalive keys).")
    tls: ServerTLSConfig | None = Field(
        None, description="Serve over TLS (mTLS with `client_ca_file`); `null`: plaintext."
    )
    auth: ReceiverAuthConfig | None = Field(
        None, description="Require a token (UNAUTHENTICATED otherwise); `null`: none."
    )

    @model_validator(mode="after")
    def _grpc_tls_version(self) -> Self:
        if self.tls is not None and (self.tls.min_version != "1.2" or self.tls.max_version not in (None, "1.3")):
            raise ValueError("`tls.min_version` must be \"1.2\" for OTLP/gRPC (and `max_version` null or \"1.3\"): "
                             "grpcio cannot restrict the version (it negotiates TLS 1.3 when the client supports it)")
        return self


class OTLPHttpConfig(ListenerLimitsConfig):
    endpoint: Endpoint = Field("0.0.0.0:4318", description="Where OTLP/HTTP is served; port 0 picks a free port.")
    max_request_body_size: int = Field(
        16 * MIB, gt=0, description="Largest body in bytes, both as sent and after gzip (larger: 413)."
    )
    tls: ServerTLSConfig | None = Field(
        None, description="Serve over TLS (mTLS with `client_ca_file`); `null`: plaintext."
    )
    auth: ReceiverAuthConfig | None = Field(None, description="Require a token (401 otherwise); `null`: none.")


class OTLPReceiverConfig(ComponentConfig):
    grpc: OTLPGrpcConfig | None = Field(OTLPGrpcConfig(), description="OTLP/gRPC server; `null` disables it.")
    http: OTLPHttpConfig | None = Field(OTLPHttpConfig(), description="OTLP/HTTP server; `null` disables it.")
    wal: ReceiverWalConfig | None = Field(
        None, description="Write-ahead log: a request is answered once it is on disk, and what was not exported yet "
        "is replayed by the next start (kill -9 loses nothing acknowledged); `null`: none.")

    @model_validator(mode="after")
    def _at_least_one_protocol(self) -> OTLPReceiverConfig:
        if self.grpc is None and self.http is None:
            raise ValueError("enable at least one protocol: `grpc` or `http` (both are null)")
        return self


def build_otlp_receivers(
    config: OTLPReceiverConfig, telemetry: Telemetry, component_id: str = "otlp"
) -> list[Source]:
    """One ``Source`` per enabled protocol (gRPC first). Nothing binds until ``start``."""
    receivers: list[Source] = []
    grpc_port = None
    wal = None
    if config.wal is not None:  # one log shared by both transports; opened and replayed by the service
        from evald.receivers.wal import ReceiverWal

        wal = ReceiverWal(config.wal, component_id, telemetry)
    if config.grpc is not None:
        from evald.receivers.otlp_grpc import OTLPGrpcReceiver

        grpc = OTLPGrpcReceiver(config.grpc, telemetry, component_id=component_id, wal=wal)
        receivers.append(grpc)
        configured = int(config.grpc.endpoint.rpartition(":")[2])
        grpc_port = lambda: grpc.bound_port or configured  # noqa: E731 - named to gRPC senders on the HTTP port
    if config.http is not None:
        from evald.receivers.otlp_http import OTLPHttpReceiver

        receivers.append(OTLPHttpReceiver(config.http, telemetry, component_id=component_id, grpc_port=grpc_port,
                                          wal=wal))
    return receivers
