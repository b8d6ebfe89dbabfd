"""Token authentication on both OTLP receivers: real OTLP exporters, raw clients, counters, rotation, config."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import os
import time
from pathlib import Path

import grpc
import httpx
import pytest
from google.rpc import code_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.receivers.auth import Authenticator, ReceiverAuthConfig
from evald.receivers.otlp_grpc import LOGS_SERVICE, TRACE_SERVICE
from evald.telemetry import Telemetry
from tests.receivers.secure_support import Running, running, sdk_spans
from tests.receivers.support import logs_request, trace_request
from tests.receivers.tls_certs import make_pki

pytestmark = pytest.mark.integration

TOKEN = "s3cr3t-token-0123456789"
WRONG = "wr0ng-token-9876543210"
TRACES = f"/{TRACE_SERVICE}/Export"
PB = {"Content-Type": "application/x-protobuf"}


async def _export(server: Running, headers: dict[str, str] | None) -> SpanExportResult:
    """Export one span with the real OTLP exporter of the server's transport (401/UNAUTHENTICATED are final)."""

    def send() -> SpanExportResult:
        exporter: GrpcSpanExporter | HttpSpanExporter
        if server.transport == "grpc":
            exporter = GrpcSpanExporter(endpoint=server.address, insecure=True, headers=headers, timeout=10)
        else:
            exporter = HttpSpanExporter(endpoint=f"http://{server.address}/v1/traces", headers=headers, timeout=10)
        try:
            return exporter.export(sdk_spans("chat"))
        finally:
            exporter.shutdown()

    return await asyncio.to_thread(send)


@pytest.mark.parametrize("transport", ["grpc", "http"])
async def test_real_exporter_with_the_right_token_is_accepted_and_others_are_refused(transport: str) -> None:
    async with running(transport, auth={"bearer_tokens": [TOKEN]}) as server:
        assert await _export(server, {"authorization": f"Bearer {TOKEN}"}) == SpanExportResult.SUCCESS
        assert [s.name for s in server.consumer.spans] == ["chat"]
        assert await _export(server, {"authorization": f"Bearer {WRONG}"}) == SpanExportResult.FAILURE
        assert await _export(server, None) == SpanExportResult.FAILURE
        assert await _export(server, {"authorization": f"Basic {TOKEN}"}) == SpanExportResult.FAILURE
        assert len(server.consumer.spans) == 1  # nothing refused reached the pipeline
        assert server.unauthenticated("invalid") == 2 and server.unauthenticated("missing") == 1
        assert server.metric("evald_receiver_requests_total", outcome="unauthenticated") == 3
        assert server.metric("evald_receiver_requests_total", outcome="success") == 1


@pytest.mark.parametrize("transport", ["grpc", "http"])
async def test_api_key_header_is_accepted_when_configured(transport: str) -> None:
    async with running(transport, auth={"bearer_tokens": [TOKEN], "api_key_header": "x-api-key"}) as server:
        assert await _export(server, {"x-api-key": TOKEN}) == SpanExportResult.SUCCESS
        assert await _export(server, {"x-api-key": WRONG}) == SpanExportResult.FAILURE
        assert await _export(server, {"x-other-key": TOKEN}) == SpanExportResult.FAILURE
        assert len(server.consumer.spans) == 1
        assert server.unauthenticated("invalid") == 1 and server.unauthenticated("missing") == 1


async def test_grpc_unauthenticated_answer_and_log_never_contain_the_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with running("grpc", auth={"bearer_tokens": [TOKEN]}) as server, \
            grpc.aio.insecure_channel(server.address) as channel:
        call = channel.unary_unary(TRACES)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(trace_request().SerializeToString(), metadata=(("authorization", f"Bearer {WRONG}"),),
                       timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert info.value.details() == "invalid credentials: the token was not accepted"
        assert WRONG not in str(info.value.trailing_metadata()) and WRONG not in caplog.text
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(trace_request().SerializeToString(), timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "missing credentials" in (info.value.details() or "")
        ok = await call(trace_request().SerializeToString(), metadata=(("authorization", f"bearer {TOKEN}"),),
                        timeout=10)
        assert ok == b""
    assert "refused a request from" in caplog.text and "invalid credentials" in caplog.text
    assert TOKEN not in caplog.text and WRONG not in caplog.text
    assert server.consumer.calls == 1


async def test_http_401_is_an_otlp_status_with_a_bearer_challenge_and_never_echoes_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with running("http", auth={"bearer_tokens": [TOKEN]}) as server, httpx.AsyncClient(timeout=10) as client:
        url = f"http://{server.address}/v1/traces"
        body = trace_request().SerializeToString()
        response = await client.post(url, content=body, headers={**PB, "Authorization": f"Bearer {WRONG}"})
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        assert response.headers["content-type"] == "application/x-protobuf"
        status = status_pb2.Status.FromString(response.content)
        assert status.code == code_pb2.UNAUTHENTICATED and status.message.startswith("invalid credentials")
        assert WRONG.encode() not in response.content and WRONG not in str(response.headers)
        response = await client.post(url, json={}, headers={"Authorization": f"Bearer {WRONG}"})
        assert response.status_code == 401 and json.loads(response.content)["code"] == code_pb2.UNAUTHENTICATED
        assert WRONG.encode() not in response.content and WRONG not in caplog.text
    assert server.unauthenticated("invalid") == 2


async def test_http_auth_is_checked_before_the_body_is_read_or_decompressed() -> None:
    limit = 1024
    async with running("http", auth={"bearer_tokens": [TOKEN]}, max_request_body_size=limit) as server, \
            httpx.AsyncClient(timeout=10) as client:
        url = f"http://{server.address}/v1/traces"
        bomb = gzip.compress(b"\0" * (limit * 1000))
        oversize = b"\0" * (limit * 10)
        for content, extra in ((b"not gzip at all", {"Content-Encoding": "gzip"}), (bomb, {"Content-Encoding": "gzip"}),
                               (oversize, {}), (b"x", {"Content-Type": "text/plain"})):
            response = await client.post(url, content=content, headers={**PB, **extra})
            assert response.status_code == 401  # not 400 / 413 / 415: an unauthenticated body is never looked at
        assert server.unauthenticated("missing") == 4
        assert server.metric("evald_receiver_requests_total", outcome="too_large") == 0
        answer = await client.post(url, content=bomb, headers={**PB, "Content-Encoding": "gzip",
                                                              "Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 413  # with the right token the limits apply as usual


async def test_the_logs_endpoints_are_protected_too() -> None:
    body = logs_request().SerializeToString()
    async with running("grpc", auth={"bearer_tokens": [TOKEN]}) as server, \
            grpc.aio.insecure_channel(server.address) as channel:
        call = channel.unary_unary(f"/{LOGS_SERVICE}/Export")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(body, timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert await call(body, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=10) == b""
        assert len(server.consumer.logs) == 1 and server.unauthenticated("missing") == 1
    async with running("http", auth={"bearer_tokens": [TOKEN]}) as server, httpx.AsyncClient(timeout=10) as client:
        url = f"http://{server.address}/v1/logs"
        assert (await client.post(url, content=body, headers=PB)).status_code == 401
        ok = await client.post(url, content=body, headers={**PB, "Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and len(server.consumer.logs) == 1 and server.unauthenticated("missing") == 1


@pytest.mark.parametrize("transport", ["grpc", "http"])
async def test_token_file_rotation_without_restart(transport: str, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first-token\n")  # a trailing newline, as `kubectl create secret --from-file` keeps it
    async with running(transport, auth={"token_files": [str(token_file)]}) as server:
        assert await _export(server, {"authorization": "Bearer first-token"}) == SpanExportResult.SUCCESS
        # Kubernetes updates a Secret volume by swapping a symlink to a new file: do the same (new inode).
        new = tmp_path / "token.new"
        new.write_text("second-token")
        os.replace(new, token_file)
        deadline = time.monotonic() + 15
        while await _export(server, {"authorization": "Bearer second-token"}) != SpanExportResult.SUCCESS:
            assert time.monotonic() < deadline, "the rotated token was not picked up"
            await asyncio.sleep(0.2)
        assert await _export(server, {"authorization": "Bearer first-token"}) == SpanExportResult.FAILURE


async def test_token_file_rewrites_are_seen_and_an_empty_file_keeps_the_previous_token(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("kept-token")
    auth = Authenticator(ReceiverAuthConfig(token_files=[str(token_file)]), Telemetry(), receiver="otlp",
                         transport="http", reload_interval=0.0)
    assert auth.check("Bearer kept-token") is None
    token_file.write_text("same-size1")  # rewritten in place, same length, within the same mtime tick
    assert auth.check("Bearer same-size1") is None and auth.check("Bearer kept-token") == "invalid"
    token_file.write_text("kept-token")
    assert auth.check("Bearer kept-token") is None
    token_file.write_text("\n")
    assert auth.check("Bearer kept-token") is None and "keeping the previous token" in caplog.text
    token_file.unlink()
    assert auth.check("Bearer kept-token") is None
    token_file.write_text("next-token")
    assert auth.check("Bearer next-token") is None and auth.check("Bearer kept-token") == "invalid"
    assert "kept-token" not in caplog.text and "next-token" not in caplog.text and "same-size1" not in caplog.text


async def test_tls_and_token_together_with_the_real_grpc_exporter(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    tls = {"cert_file": str(pki.server_cert), "key_file": str(pki.server_key)}
    credentials = grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    async with running("grpc", tls=tls, auth={"bearer_tokens": [TOKEN]}) as server:

        def send(token: str) -> SpanExportResult:
            exporter = GrpcSpanExporter(endpoint=server.address, credentials=credentials,
                                        headers={"authorization": f"Bearer {token}"}, timeout=10)
            try:
                return exporter.export(sdk_spans("secure"))
            finally:
                exporter.shutdown()

        assert await asyncio.to_thread(send, TOKEN) == SpanExportResult.SUCCESS
        assert await asyncio.to_thread(send, WRONG) == SpanExportResult.FAILURE
        assert [s.name for s in server.consumer.spans] == ["secure"] and server.unauthenticated("invalid") == 1


def test_check_reasons() -> None:
    auth = Authenticator(ReceiverAuthConfig(bearer_tokens=[TOKEN, "other"], api_key_header="x-api-key"),
                         Telemetry(), receiver="otlp", transport="grpc")
    assert auth.check(f"Bearer {TOKEN}") is None and auth.check("BEARER other") is None
    assert auth.check(None, TOKEN) is None and auth.check(f"Bearer {WRONG}", TOKEN) is None
    assert auth.check(None) == "missing" and auth.check(f"Bearer {WRONG}") == "invalid"
    assert auth.check("Bearer ") == "invalid" and auth.check(TOKEN) == "invalid"
    assert auth.check(f"Bearer {TOKEN}x") == "invalid" and auth.check(None, TOKEN[:-1]) == "invalid"


@pytest.mark.parametrize(
    ("auth", "match"),
    [
        ({}, "needs at least one token"),
        ({"bearer_tokens": []}, "needs at least one token"),
        ({"bearer_tokens": [""]}, r"bearer_tokens\[0\] is empty"),
        ({"bearer_tokens": ["two words"]}, "visible ASCII without spaces"),
        ({"token_files": ["/nonexistent/token"]}, "cannot read token file '/nonexistent/token'"),
        ({"token_files": ["EMPTY"]}, "is empty"),
        ({"bearer_tokens": ["t"], "api_key_header": "X-Api-Key"}, "lowercase header name"),
        ({"bearer_tokens": ["t"], "api_key_header": "authorization"}, "invalid `api_key_header`"),
        ({"bearer_tokens": ["t"], "tokens": ["t"]}, "Extra inputs"),
    ],
)
def test_invalid_auth_configs(auth: dict[str, object], match: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    files = auth.get("token_files")
    if isinstance(files, list):
        auth = {**auth, "token_files": [str(empty) if f == "EMPTY" else f for f in files]}
    with pytest.raises(ValidationError, match=match) as info:
        ReceiverAuthConfig.model_validate(auth)
    assert "two words" not in str(info.value)  # the offending token is never echoed


def test_config_load_rejects_an_empty_token_from_the_environment() -> None:
    text = """
receivers:
  otlp:
    grpc: {endpoint: "127.0.0.1:0", auth: {bearer_tokens: ["${env:EVALD_TOKEN}"]}}
    http: {endpoint: "127.0.0.1:0", auth: {bearer_tokens: ["${env:EVALD_TOKEN}"], api_key_header: x-api-key}}
"""
    resolved = parse_config(text, environ={"EVALD_TOKEN": TOKEN})
    otlp = resolved.receivers["otlp"]
    assert otlp.grpc.auth.bearer_tokens[0].get_secret_value() == TOKEN  # type: ignore[attr-defined]
    assert TOKEN not in repr(otlp)
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={"EVALD_TOKEN": ""})
    assert "bearer_tokens[0] is empty" in str(info.value) and "receivers.otlp.grpc.auth" in str(info.value)
