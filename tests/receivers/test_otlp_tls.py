"""TLS and mTLS on both OTLP receivers, exercised with the real OpenTelemetry OTLP exporters."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.receivers.otlp import OTLPGrpcConfig, OTLPHttpConfig
from evald.receivers.tls import ServerTLSConfig
from tests.receivers.secure_support import FAILING_EXPORT_TIMEOUT, Running, running, sdk_spans
from tests.receivers.support import trace_request
from tests.receivers.tls_certs import Pki, make_pki

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def http_exporter_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override a session's ``verify`` (psf/requests#4650), which
    would replace the exporter's ``certificate_file``; this machine sets both."""
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)


def _tls(pki: Pki, *, mtls: bool = False, min_version: str = "1.2") -> dict[str, str]:
    tls = {"cert_file": str(pki.server_cert), "key_file": str(pki.server_key), "min_version": min_version}
    if mtls:
        tls["client_ca_file"] = str(pki.ca)
    return tls


def _grpc_credentials(pki: Pki, cert: Path | None = None, key: Path | None = None) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=pki.ca.read_bytes(),
        private_key=key.read_bytes() if key else None,
        certificate_chain=cert.read_bytes() if cert else None,
    )


async def _grpc_export(
    server: Running,
    *,
    credentials: grpc.ChannelCredentials | None = None,
    insecure: bool | None = None,
    timeout: float = 10.0,
) -> SpanExportResult:
    def send() -> SpanExportResult:
        exporter = GrpcSpanExporter(endpoint=server.address, credentials=credentials, insecure=insecure,
                                    timeout=timeout)
        try:
            return exporter.export(sdk_spans("chat"))
        finally:
            exporter.shutdown()

    return await asyncio.to_thread(send)


async def _http_export(
    server: Running,
    scheme: str = "https",
    *,
    certificate_file: str | None = None,
    client_certificate_file: str | None = None,
    client_key_file: str | None = None,
    timeout: float = 10.0,
) -> SpanExportResult:
    def send() -> SpanExportResult:
        url = f"{scheme}://127.0.0.1:{server.port}/v1/traces"
        exporter = HttpSpanExporter(endpoint=url, certificate_file=certificate_file,
                                    client_certificate_file=client_certificate_file, client_key_file=client_key_file,
                                    timeout=timeout)
        try:
            return exporter.export(sdk_spans("chat"))
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]

    return await asyncio.to_thread(send)


async def test_grpc_tls_accepts_a_trusting_exporter_and_refuses_plaintext(pki: Pki) -> None:
    async with running("grpc", tls=_tls(pki)) as server:
        assert await _grpc_export(server, credentials=_grpc_credentials(pki)) == SpanExportResult.SUCCESS
        assert [s.name for s in server.consumer.spans] == ["chat"]
        plain = await _grpc_export(server, insecure=True, timeout=FAILING_EXPORT_TIMEOUT)
        assert plain == SpanExportResult.FAILURE and len(server.consumer.spans) == 1


async def test_grpc_mtls_needs_a_client_certificate_signed_by_the_client_ca(pki: Pki) -> None:
    async with running("grpc", tls=_tls(pki, mtls=True)) as server:
        with_cert = _grpc_credentials(pki, pki.client_cert, pki.client_key)
        assert await _grpc_export(server, credentials=with_cert) == SpanExportResult.SUCCESS
        without = await _grpc_export(server, credentials=_grpc_credentials(pki), timeout=FAILING_EXPORT_TIMEOUT)
        assert without == SpanExportResult.FAILURE
        rogue = _grpc_credentials(pki, pki.rogue_cert, pki.rogue_key)
        assert await _grpc_export(server, credentials=rogue, timeout=FAILING_EXPORT_TIMEOUT) == SpanExportResult.FAILURE
        assert [s.name for s in server.consumer.spans] == ["chat"]


@pytest.mark.usefixtures("http_exporter_env")
async def test_http_tls_accepts_a_trusting_exporter_and_refuses_plaintext(pki: Pki) -> None:
    async with running("http", tls=_tls(pki)) as server:
        assert await _http_export(server, certificate_file=str(pki.ca)) == SpanExportResult.SUCCESS
        assert [s.name for s in server.consumer.spans] == ["chat"]
        assert await _http_export(server, "http", timeout=FAILING_EXPORT_TIMEOUT) == SpanExportResult.FAILURE
        untrusting = await _http_export(server, timeout=FAILING_EXPORT_TIMEOUT)  # the system CAs do not know ours
        assert untrusting == SpanExportResult.FAILURE and len(server.consumer.spans) == 1


@pytest.mark.usefixtures("http_exporter_env")
async def test_http_mtls_needs_a_client_certificate_signed_by_the_client_ca(pki: Pki) -> None:
    async with running("http", tls=_tls(pki, mtls=True)) as server:
        ok = await _http_export(server, certificate_file=str(pki.ca), client_certificate_file=str(pki.client_cert),
                                client_key_file=str(pki.client_key))
        assert ok == SpanExportResult.SUCCESS
        without = await _http_export(server, certificate_file=str(pki.ca), timeout=FAILING_EXPORT_TIMEOUT)
        assert without == SpanExportResult.FAILURE
        rogue = await _http_export(server, certificate_file=str(pki.ca), client_certificate_file=str(pki.rogue_cert),
                                   client_key_file=str(pki.rogue_key), timeout=FAILING_EXPORT_TIMEOUT)
        assert rogue == SpanExportResult.FAILURE
        assert [s.name for s in server.consumer.spans] == ["chat"]


async def test_http_min_version_1_3_refuses_a_tls_1_2_client(pki: Pki) -> None:
    body = trace_request(1).SerializeToString()
    headers = {"Content-Type": "application/x-protobuf"}
    async with running("http", tls=_tls(pki, min_version="1.3")) as server:
        url = f"https://127.0.0.1:{server.port}/v1/traces"
        old = ssl.create_default_context(cafile=str(pki.ca))
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        async with httpx.AsyncClient(verify=old, timeout=10) as client:
            with pytest.raises(httpx.ConnectError):
                await client.post(url, content=body, headers=headers)
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(pki.ca)), timeout=10) as client:
            response = await client.post(url, content=body, headers=headers)
        assert response.status_code == 200 and len(server.consumer.spans) == 1


def test_tls_config_accepts_a_matching_pair(pki: Pki) -> None:
    cfg = OTLPHttpConfig.model_validate({"tls": _tls(pki, mtls=True, min_version="1.3")})
    assert cfg.tls is not None and cfg.tls.client_ca_file == str(pki.ca) and cfg.tls.min_version == "1.3"
    assert OTLPHttpConfig().tls is None and OTLPGrpcConfig().tls is None  # plaintext by default


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"key_file": None}, "`cert_file` is set but `key_file` is missing"),
        ({"cert_file": None}, "`key_file` is set but `cert_file` is missing"),
        ({"cert_file": "/nonexistent/tls.crt"}, "cannot read '/nonexistent/tls.crt'"),
        ({"client_ca_file": "/nonexistent/ca.crt"}, "cannot read '/nonexistent/ca.crt'"),
        ({"key_file": "CLIENT_KEY"}, "the key does not match the certificate"),
        ({"client_ca_file": "SERVER_KEY"}, "cannot use `client_ca_file`"),
        ({"min_version": "1.1"}, "'1.2' or '1.3'"),
    ],
)
def test_invalid_tls_configs(pki: Pki, change: dict[str, str | None], match: str) -> None:
    files = {"CLIENT_KEY": str(pki.client_key), "SERVER_KEY": str(pki.server_key)}
    tls: dict[str, str | None] = {**_tls(pki), **{k: files.get(v, v) if v else v for k, v in change.items()}}
    with pytest.raises(ValidationError, match=match):
        ServerTLSConfig.model_validate({k: v for k, v in tls.items() if v is not None})


def test_grpc_cannot_promise_tls_1_3_only(pki: Pki) -> None:
    with pytest.raises(ValidationError, match='must be "1.2" for OTLP/gRPC'):
        OTLPGrpcConfig.model_validate({"tls": _tls(pki, min_version="1.3")})


def test_config_load_names_the_key_of_a_missing_certificate(pki: Pki) -> None:
    text = f"""
receivers:
  otlp:
    grpc: {{endpoint: "127.0.0.1:0", tls: {{cert_file: {pki.server_cert}, key_file: {pki.server_key}}}}}
    http: {{endpoint: "127.0.0.1:0", tls: {{cert_file: /etc/evald/tls/missing.crt, key_file: {pki.server_key}}}}}
"""
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    assert "receivers.otlp.http.tls.cert_file" in str(info.value) and "missing.crt" in str(info.value)
    assert "receivers.otlp.grpc" not in str(info.value)
