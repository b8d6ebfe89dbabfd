"""Certificate reload without a restart (tls_reload.py): live receivers whose certificate files are replaced by a
certificate from a new CA, exercised with the real OpenTelemetry OTLP exporters."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import ssl
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from evald.receivers.tls import ServerTLSConfig, TLSMaterial
from evald.receivers.tls_reload import CertificateReloader
from tests.receivers.secure_support import FAILING_EXPORT_TIMEOUT, Running, running, sdk_spans
from tests.receivers.support import trace_request
from tests.receivers.tls_certs import Pki, make_pki

pytestmark = pytest.mark.integration

RELOAD = 0.2  # seconds: reload_interval of the live tests


@pytest.fixture
def pkis(tmp_path: Path) -> tuple[Pki, Pki, Path]:
    """The PKI the receiver starts with, a second one from a new CA, and the directory the receiver reads."""
    (tmp_path / "old").mkdir(), (tmp_path / "new").mkdir(), (tmp_path / "live").mkdir()
    old, new = make_pki(tmp_path / "old"), make_pki(tmp_path / "new")
    for name in ("tls.crt", "tls.key", "ca.crt"):
        shutil.copy(tmp_path / "old" / name, tmp_path / "live" / name)
    return old, new, tmp_path / "live"


@pytest.fixture
def http_exporter_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override the exporter's ``certificate_file``."""
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)


def _tls(live: Path, **extra: object) -> dict[str, object]:
    return {"cert_file": str(live / "tls.crt"), "key_file": str(live / "tls.key"), "reload_interval": f"{RELOAD}s",
            **extra}


def _rotate(source: Pki, live: Path, names: tuple[str, ...] = ("tls.key", "tls.crt", "ca.crt")) -> None:
    """Replace files the way a secret rotation does: write beside, then rename over (a new inode)."""
    files = {"tls.crt": source.server_cert, "tls.key": source.server_key, "ca.crt": source.ca}
    for name in names:
        shutil.copy(files[name], live / f".{name}.tmp")
        os.replace(live / f".{name}.tmp", live / name)


async def _grpc_export(server: Running, ca: Path, timeout: float = 10.0) -> SpanExportResult:
    def send() -> SpanExportResult:
        exporter = GrpcSpanExporter(endpoint=server.address, timeout=timeout,
                                    credentials=grpc.ssl_channel_credentials(root_certificates=ca.read_bytes()))
        try:
            return exporter.export(sdk_spans("chat"))
        finally:
            exporter.shutdown()

    return await asyncio.to_thread(send)


async def _http_export(server: Running, ca: Path, timeout: float = 10.0, **client: str) -> SpanExportResult:
    def send() -> SpanExportResult:
        exporter = HttpSpanExporter(endpoint=f"https://127.0.0.1:{server.port}/v1/traces", certificate_file=str(ca),
                                    timeout=timeout, **client)  # type: ignore[arg-type]
        try:
            return exporter.export(sdk_spans("chat"))
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]

    return await asyncio.to_thread(send)


async def test_grpc_receiver_serves_a_rotated_certificate_from_a_new_ca(pkis: tuple[Pki, Pki, Path]) -> None:
    old, new, live = pkis
    async with running("grpc", tls=_tls(live)) as server:
        assert await _grpc_export(server, old.ca) == SpanExportResult.SUCCESS
        _rotate(new, live)
        await asyncio.sleep(RELOAD * 2)
        assert await _grpc_export(server, new.ca) == SpanExportResult.SUCCESS  # reconnects, no error
        assert await _grpc_export(server, old.ca, FAILING_EXPORT_TIMEOUT) == SpanExportResult.FAILURE
        assert len(server.consumer.spans) == 2


@pytest.mark.usefixtures("http_exporter_env")
async def test_http_receiver_serves_a_rotated_certificate_from_a_new_ca(pkis: tuple[Pki, Pki, Path]) -> None:
    old, new, live = pkis
    async with running("http", tls=_tls(live)) as server:
        assert await _http_export(server, old.ca) == SpanExportResult.SUCCESS
        _rotate(new, live)
        await asyncio.sleep(RELOAD * 2)
        assert await _http_export(server, new.ca) == SpanExportResult.SUCCESS
        assert await _http_export(server, old.ca, FAILING_EXPORT_TIMEOUT) == SpanExportResult.FAILURE
        assert len(server.consumer.spans) == 2


@pytest.mark.usefixtures("http_exporter_env")
async def test_a_rotated_client_ca_changes_which_clients_mtls_accepts(pkis: tuple[Pki, Pki, Path]) -> None:
    old, new, live = pkis
    async with running("http", tls=_tls(live, client_ca_file=str(live / "ca.crt"))) as http_server:
        old_client = {"client_certificate_file": str(old.client_cert), "client_key_file": str(old.client_key)}
        new_client = {"client_certificate_file": str(new.client_cert), "client_key_file": str(new.client_key)}
        assert await _http_export(http_server, old.ca, **old_client) == SpanExportResult.SUCCESS
        _rotate(new, live)
        await asyncio.sleep(RELOAD * 2)
        assert await _http_export(http_server, new.ca, **new_client) == SpanExportResult.SUCCESS
        refused = await _http_export(http_server, new.ca, FAILING_EXPORT_TIMEOUT, **old_client)
        assert refused == SpanExportResult.FAILURE
    async with running("grpc", tls=_tls(live, client_ca_file=str(live / "ca.crt"))) as server:
        _rotate(old, live)
        await asyncio.sleep(RELOAD * 2)

        def send(pki: Pki) -> SpanExportResult:
            credentials = grpc.ssl_channel_credentials(pki.ca.read_bytes(), pki.client_key.read_bytes(),
                                                       pki.client_cert.read_bytes())
            exporter = GrpcSpanExporter(endpoint=server.address, credentials=credentials,
                                        timeout=FAILING_EXPORT_TIMEOUT)
            try:
                return exporter.export(sdk_spans("chat"))
            finally:
                exporter.shutdown()

        assert await asyncio.to_thread(send, old) == SpanExportResult.SUCCESS
        assert await asyncio.to_thread(send, new) == SpanExportResult.FAILURE


async def test_a_half_written_rotation_keeps_the_old_certificate_until_it_is_whole(
    pkis: tuple[Pki, Pki, Path], caplog: pytest.LogCaptureFixture
) -> None:
    old, new, live = pkis
    body = trace_request(1).SerializeToString()
    headers = {"Content-Type": "application/x-protobuf"}

    async def post(ca: Path) -> int:
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(ca)), timeout=5) as client:
            return (await client.post(f"https://127.0.0.1:{server.port}/v1/traces", content=body,
                                      headers=headers)).status_code

    async with running("http", tls=_tls(live)) as server:
        _rotate(new, live, ("tls.crt",))  # the new certificate, the old key: unusable
        await asyncio.sleep(RELOAD * 2)
        with caplog.at_level(logging.WARNING, logger="evald.receivers.tls_reload"):
            assert await post(old.ca) == 200  # still the old certificate
        assert "cannot be used yet" in caplog.text and "keeping the ones in use" in caplog.text
        _rotate(new, live, ("tls.key",))
        await asyncio.sleep(RELOAD * 2)
        assert await post(new.ca) == 200
        with pytest.raises(httpx.ConnectError):
            await post(old.ca)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_reloader_checks_at_most_once_per_interval_and_ignores_identical_contents(
    pkis: tuple[Pki, Pki, Path]
) -> None:
    old, new, live = pkis
    config = ServerTLSConfig.model_validate(_tls(live, reload_interval="1m"))
    clock = FakeClock()
    reloader = CertificateReloader(config, clock)
    _rotate(old, live)  # new inodes, same bytes
    clock.now += 61
    assert reloader.poll() is None and reloader.reloads == 0
    _rotate(new, live)
    clock.now += 30
    assert reloader.poll() is None  # not due yet: nothing is even stat'ed
    clock.now += 31
    reloaded = reloader.poll()
    assert reloaded is not None and reloaded[0].cert == new.server_cert.read_bytes()
    assert reloaded[1].verify_mode == ssl.CERT_NONE and reloader.reloads == 1
    clock.now += 61
    assert reloader.poll() is None and reloader.reloads == 1


def test_inline_pem_and_the_collector_key_set(pkis: tuple[Pki, Pki, Path]) -> None:
    old, _new, _live = pkis
    inline = ServerTLSConfig.model_validate({"cert_pem": old.server_cert.read_text(),
                                             "key_pem": old.server_key.read_text(),
                                             "client_ca_pem": old.ca.read_text(), "max_version": "1.3"})
    assert inline.read_material() == TLSMaterial(old.server_cert.read_bytes(), old.server_key.read_bytes(),
                                                 old.ca.read_bytes())
    assert inline.files() == ()
    mixed = ServerTLSConfig.model_validate({"cert_file": str(old.server_cert), "key_pem": old.server_key.read_text()})
    assert mixed.files() == (str(old.server_cert),)
