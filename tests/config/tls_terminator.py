"""A TLS terminator for the client TLS tests: TLS on 127.0.0.1 in front of a plaintext port (rotel, tansu), whose
certificate names only ``collector.internal`` (tests/config/client_certs.py).

It offers ALPN ``h2``/``http/1.1`` (grpc needs ``h2``), pipes bytes both ways and counts ClientHellos, completed
handshakes and connections that carried a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tests.config.client_certs import ClientPki


@dataclass
class Terminator:
    """TLS in front of a plaintext port; ``hellos`` counts ClientHellos, ``handshakes`` completed handshakes and
    ``requests`` connections on which the client sent any byte after the handshake (grpc checks the server's name
    after the handshake, then closes without a byte)."""

    context: ssl.SSLContext
    upstream: int
    hellos: int = 0
    handshakes: int = 0
    requests: int = 0
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    async def start(self) -> Terminator:
        def hello(_obj: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
            self.hellos += 1

        self.context.sni_callback = hello
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", 0, ssl=self.context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.handshakes += 1
        try:
            async with asyncio.timeout(30):
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except (OSError, TimeoutError):
            writer.close()
            return

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter, count: bool) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while data := await src.read(65536):
                    if count:
                        self.requests, count = self.requests + 1, False
                    dst.write(data)
                    await dst.drain()
            dst.close()

        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            await asyncio.gather(copy(reader, up_writer, True), copy(up_reader, writer, False))
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)

    def rotate(self, pki: ClientPki) -> None:
        """Serve ``pki``'s server certificate from now on and close every open connection (a restarted server)."""
        self.context.load_cert_chain(pki.server_cert, pki.server_key)
        for writer in list(self._writers):
            writer.close()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.wait_for(self._server.wait_closed(), 5)


def server_context(pki: ClientPki, *, require_client_cert: bool = False) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    context.set_alpn_protocols(["h2", "http/1.1"])
    if require_client_cert:
        context.load_verify_locations(cafile=pki.ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


@contextlib.asynccontextmanager
async def terminator(context: ssl.SSLContext, upstream: int) -> AsyncIterator[Terminator]:
    front = await Terminator(context, upstream).start()
    try:
        yield front
    finally:
        await front.stop()
