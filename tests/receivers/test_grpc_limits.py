"""The OTLP/gRPC server's connection limits reach grpc-core: a connection cap, GOAWAY to idle connections, the
advertised max_concurrent_streams (raw sockets and a real grpc.aio channel)."""

from __future__ import annotations

import asyncio
import socket
import struct

import grpc
import pytest

from evald.receivers.connection_limits import auto_max_connections
from evald.receivers.grpc_limits import GrpcKeepaliveConfig, grpc_limit_options
from evald.receivers.otlp import OTLPGrpcConfig
from evald.receivers.otlp_grpc import TRACE_SERVICE, OTLPGrpcReceiver
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, trace_request

SETTINGS_MAX_CONCURRENT_STREAMS = 0x3


def test_options_follow_the_collector_keys() -> None:
    keepalive = GrpcKeepaliveConfig.model_validate({
        "server_parameters": {"max_connection_idle": "1m", "max_connection_age": "30m",
                              "max_connection_age_grace": "10s", "time": "1h", "timeout": "5s"},
        "enforcement_policy": {"min_time": "10s", "permit_without_stream": True}})
    options = dict(grpc_limit_options(keepalive, 50, 300))
    assert options == {
        "grpc.keepalive_time_ms": 3_600_000, "grpc.keepalive_timeout_ms": 5_000,
        "grpc.http2.min_ping_interval_without_data_ms": 10_000, "grpc.keepalive_permit_without_calls": 1,
        "grpc.server_handshake_timeout_ms": 10_000, "grpc.max_allowed_incoming_connections": 300,
        "grpc.max_connection_idle_ms": 60_000, "grpc.max_connection_age_ms": 1_800_000,
        "grpc.max_connection_age_grace_ms": 10_000, "grpc.max_concurrent_streams": 50}
    defaults = dict(grpc_limit_options(GrpcKeepaliveConfig(), 100, 0))
    assert defaults == {  # no age limit by default; the cap is a quarter of the open-file share (auto)
        "grpc.keepalive_time_ms": 7_200_000, "grpc.keepalive_timeout_ms": 20_000,
        "grpc.http2.min_ping_interval_without_data_ms": 300_000, "grpc.keepalive_permit_without_calls": 0,
        "grpc.server_handshake_timeout_ms": 10_000,
        "grpc.max_allowed_incoming_connections": auto_max_connections(share=0.25),
        "grpc.max_connection_idle_ms": 300_000, "grpc.max_concurrent_streams": 100}


@pytest.mark.integration
async def test_the_cap_closes_extra_connections_and_idle_ones_get_goaway() -> None:
    config = OTLPGrpcConfig.model_validate({"endpoint": "127.0.0.1:0", "max_connections": 2,
                                            "keepalive": {"server_parameters": {"max_connection_idle": "500ms"}}})
    receiver = OTLPGrpcReceiver(config, Telemetry())
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        assert receiver.bound_port is not None
        loop = asyncio.get_running_loop()
        sockets = []
        for _ in range(3):
            sock = socket.socket()
            sock.setblocking(False)
            await loop.sock_connect(sock, ("127.0.0.1", receiver.bound_port))
            sockets.append(sock)
        first, second, third = [await asyncio.wait_for(loop.sock_recv(s, 4096), 2) for s in sockets]
        assert third == b""  # over max_connections: closed by grpc-core at once
        for frame in (first, second):  # the server's SETTINGS frame advertises 100 streams per connection
            length, kind = int.from_bytes(frame[:3], "big"), frame[3]
            settings = dict(struct.iter_unpack(">HI", frame[9:9 + length]))
            assert kind == 0x4 and settings[SETTINGS_MAX_CONCURRENT_STREAMS] == 100
        for sock in sockets:
            sock.close()
        await asyncio.sleep(0.2)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{receiver.bound_port}") as channel:
            export = channel.unary_unary(f"/{TRACE_SERVICE}/Export", request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
            await export(trace_request(1).SerializeToString(), timeout=5)
            assert channel.get_state() == grpc.ChannelConnectivity.READY and len(consumer.spans) == 1
            await asyncio.sleep(1.5)  # idle past max_connection_idle: GOAWAY, the channel goes idle
            assert channel.get_state() == grpc.ChannelConnectivity.IDLE
            await export(trace_request(1).SerializeToString(), timeout=5)  # and reconnects on the next call
        assert len(consumer.spans) == 2
    finally:
        await receiver.shutdown(1.0)
