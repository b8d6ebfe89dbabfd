"""Connection limits of the OTLP/gRPC server, as grpc-core channel arguments (the Collector's ``configgrpc`` keys).

Config keys (``receivers.otlp.grpc``, beside those in otlp.py)::

    max_concurrent_streams: 100            # calls in flight per HTTP/2 connection (0 = unlimited)
    max_connections: 0                     # open connections (0 = auto: a quarter of RLIMIT_NOFILE - 256, 16..8192)
    keepalive:
      server_parameters:
        max_connection_idle: 5m            # a connection without calls for this long gets GOAWAY (0 = never)
        max_connection_age: 0s             # any connection gets GOAWAY after this (0 = never)
        max_connection_age_grace: 30s      # calls in flight after that GOAWAY get this long, then it is closed
        time: 2h                           # server pings an idle client after this
        timeout: 20s                       # and closes the connection if the ping is not answered in this
      enforcement_policy:
        min_time: 5m                       # clients pinging more often than this are disconnected (ENHANCE_YOUR_CALM)
        permit_without_stream: false       # pings without calls in flight count as abuse

A connection that never completes its HTTP/2 handshake is closed by grpc-core after 10 s
(``grpc.server_handshake_timeout_ms``, which covers TLS too). Connections over ``max_connections`` are closed by
grpc-core as they are accepted (``grpc.max_allowed_incoming_connections``): grpc-core does not tell Python about
connections, so they are not counted by evald (nor are idle closes); its accept loop backs off on EMFILE by itself.
"""

from __future__ import annotations

from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.receivers.connection_limits import auto_max_connections

HANDSHAKE_TIMEOUT_MS = 10_000


class GrpcServerParameters(ComponentConfig):
    max_connection_idle: Duration = Field(
        300.0, ge=0, description="GOAWAY to a connection without calls for this long (0 = never).")
    max_connection_age: Duration = Field(0.0, ge=0, description="GOAWAY to any connection this old (0 = never).")
    max_connection_age_grace: Duration = Field(
        30.0, ge=0, description="Calls in flight at max_connection_age get this long before the connection closes.")
    time: Duration = Field(7200.0, gt=0, description="Ping a client after this long without activity.")
    timeout: Duration = Field(20.0, gt=0, description="Close the connection if a ping is not answered within this.")


class GrpcEnforcementPolicy(ComponentConfig):
    min_time: Duration = Field(
        300.0, ge=0, description="Clients that ping more often than this are disconnected (ENHANCE_YOUR_CALM).")
    permit_without_stream: bool = Field(False, description="Allow client pings while no call is in flight.")


class GrpcKeepaliveConfig(ComponentConfig):
    server_parameters: GrpcServerParameters = Field(
        GrpcServerParameters(), description="Idle and age limits, server pings (Collector's ServerParameters).")
    enforcement_policy: GrpcEnforcementPolicy = Field(
        GrpcEnforcementPolicy(), description="What clients' keepalive pings may do (Collector's EnforcementPolicy).")


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def grpc_limit_options(keepalive: GrpcKeepaliveConfig, max_concurrent_streams: int,
                       max_connections: int) -> list[tuple[str, int]]:
    """grpc-core server options for these limits (``max_connections`` 0: auto)."""
    server, policy = keepalive.server_parameters, keepalive.enforcement_policy
    options = [
        ("grpc.keepalive_time_ms", _ms(server.time)),
        ("grpc.keepalive_timeout_ms", _ms(server.timeout)),
        ("grpc.http2.min_ping_interval_without_data_ms", _ms(policy.min_time)),
        ("grpc.keepalive_permit_without_calls", int(policy.permit_without_stream)),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
        ("grpc.max_allowed_incoming_connections", max_connections or auto_max_connections(share=0.25)),
    ]
    if server.max_connection_idle:
        options.append(("grpc.max_connection_idle_ms", _ms(server.max_connection_idle)))
    if server.max_connection_age:
        options.append(("grpc.max_connection_age_ms", _ms(server.max_connection_age)))
        options.append(("grpc.max_connection_age_grace_ms", _ms(server.max_connection_age_grace)))
    if max_concurrent_streams:
        options.append(("grpc.max_concurrent_streams", max_concurrent_streams))
    return options
