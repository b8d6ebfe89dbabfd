"""The client context (evald/config/tls_client_context.py) against real TLS servers on 127.0.0.1: the asyncio path
aiokafka uses (``wrap_bio``) and the blocking socket path urllib3 uses (``wrap_socket``).

The servers' certificates name only ``collector.internal``, so every connection to 127.0.0.1 needs
``server_name_override`` unless verification is skipped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from evald.config.tls_client import ClientTLSConfig
from evald.config.tls_client_context import client_ssl_context
from tests.config.client_certs import ClientPki, make_client_pki

pytestmark = pytest.mark.integration


def server_context(pki: ClientPki, *, client_ca: Path | None = None, names: list[str] | None = None
                   ) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    if client_ca is not None:
        context.load_verify_locations(cafile=client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    if names is not None:
        def record(_obj: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
            names.append(name or "")

        context.sni_callback = record
    return context


@asynccontextmanager
async def tls_server(context: ssl.SSLContext) -> AsyncIterator[int]:
    """A TLS server on 127.0.0.1 that answers every connection with ``ok``; yields its port."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"ok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), 5)


async def fetch(port: int, context: ssl.SSLContext) -> bytes:
    """Connect as asyncio (and so aiokafka) does, to 127.0.0.1, and read the server's answer."""
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        try:
            return await reader.read(2)
        finally:
            writer.close()


def fetch_blocking(port: int, context: ssl.SSLContext) -> bytes:
    """Connect as urllib3 does: ``context.wrap_socket`` with the host it dialled as ``server_hostname``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        return tls.recv(2)


@pytest.fixture
def pki(tmp_path: Path) -> ClientPki:
    return make_client_pki(tmp_path / "pki")


async def test_server_name_override_is_sent_and_checked(pki: ClientPki) -> None:
    names: list[str] = []
    async with tls_server(server_context(pki, names=names)) as port:
        plain = client_ssl_context(ClientTLSConfig(ca_file=str(pki.ca)))
        with pytest.raises(ssl.SSLCertVerificationError, match="IP address mismatch"):
            await fetch(port, plain)
        overridden = client_ssl_context(ClientTLSConfig(ca_file=str(pki.ca), server_name_override=pki.host))
        assert await fetch(port, overridden) == b"ok"
        assert await asyncio.to_thread(fetch_blocking, port, overridden) == b"ok"
        wrong = client_ssl_context(ClientTLSConfig(ca_file=str(pki.ca), server_name_override="other.internal"))
        with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
            await fetch(port, wrong)
    assert names[-3:-1] == [pki.host, pki.host]  # SNI carried the override on both paths


async def test_insecure_skip_verify_connects_to_an_unknown_ca(pki: ClientPki, tmp_path: Path) -> None:
    async with tls_server(server_context(pki)) as port:
        with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer"):
            await fetch(port, client_ssl_context(ClientTLSConfig()))  # the system store does not know the test CA
        assert await fetch(port, client_ssl_context(ClientTLSConfig(insecure_skip_verify=True))) == b"ok"


async def test_inline_pem_client_certificate_for_mtls(pki: ClientPki) -> None:
    async with tls_server(server_context(pki, client_ca=pki.ca)) as port:
        inline = ClientTLSConfig(ca_pem=pki.ca.read_text(), cert_pem=pki.client_cert.read_text(),
                                 key_pem=pki.client_key.read_text(), server_name_override=pki.host)
        assert await fetch(port, client_ssl_context(inline)) == b"ok"
        without = client_ssl_context(ClientTLSConfig(ca_pem=pki.ca.read_text(), server_name_override=pki.host))
        try:  # the server ends the handshake (no certificate); with TLS 1.3 the client sees it at its first read
            answer: bytes | None = await fetch(port, without)
        except (ssl.SSLError, ConnectionError):
            answer = None
        assert answer in (None, b"")


async def test_max_version_caps_what_the_client_offers(pki: ClientPki) -> None:
    versions: list[str | None] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        versions.append(writer.get_extra_info("ssl_object").version())
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_context(pki))
    try:
        port = server.sockets[0].getsockname()[1]
        for max_version in ("1.2", None):
            config = ClientTLSConfig(ca_file=str(pki.ca), server_name_override=pki.host, max_version=max_version)
            await fetch(port, client_ssl_context(config))
        await until(lambda: len(versions) >= 2)
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), 5)
    assert versions == ["TLSv1.2", "TLSv1.3"]


def replace(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` atomically (a rename, as a Secret volume update), with a new mtime."""
    tmp = path.with_suffix(".new")
    tmp.write_bytes(content)
    os.replace(tmp, path)


async def until(predicate: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_reload_interval_picks_up_a_rotated_ca_for_new_connections(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old, new = make_client_pki(tmp_path / "old"), make_client_pki(tmp_path / "new")
    ca = tmp_path / "ca.crt"
    ca.write_bytes(old.ca.read_bytes())
    config = ClientTLSConfig(ca_file=str(ca), server_name_override=new.host, reload_interval="200ms")
    context = client_ssl_context(config)
    assert context.reloader is not None
    async with tls_server(server_context(new)) as port:
        with pytest.raises(ssl.SSLCertVerificationError):
            await fetch(port, context)  # the server already moved to the new CA
        replace(ca, b"-----BEGIN CERTIFICATE-----\nhalf writ")  # a rotation caught half way: kept, warned
        with caplog.at_level(logging.WARNING, logger="evald.config.tls_client_context"):
            await asyncio.sleep(0.25)
            with pytest.raises(ssl.SSLCertVerificationError):
                await fetch(port, context)
        assert context.reloader.failures == 1 and "cannot be used yet" in caplog.text
        replace(ca, new.ca.read_bytes())
        await asyncio.sleep(0.25)
        assert await fetch(port, context) == b"ok"
        assert (context.reloader.reloads, context.reloader.failures) == (1, 1)
