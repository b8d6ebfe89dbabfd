"""The ``ssl.SSLContext`` of a client ``tls`` block (tls_client.py): server name override and certificate reload.

Config keys used: ``server_name_override`` and ``reload_interval`` of ``ClientTLSConfig``; the rest is applied by
``build_client_context``.

:func:`client_ssl_context` returns a :class:`ClientSSLContext`, a real ``ssl.SSLContext`` that every client library
here accepts (aiokafka and asyncio call its ``wrap_bio``, urllib3/requests its ``wrap_socket``). Both are
overridden to

- send ``server_name_override`` as SNI and check the server's certificate against it (instead of the host the
  library connects to), like Go's ``tls.Config.ServerName``;
- with ``reload_interval``, use the newest context: at a new connection, when at least ``reload_interval`` has
  passed since the last check, the files (``ca_file``, ``cert_file``, ``key_file``) are stat'ed (mtime, size,
  inode, so a Kubernetes Secret's symlink swap counts) and, if they changed, a new context is built from them.
  Established connections keep theirs.

Failure semantics: a change that cannot be used (a file missing or half written, a key that does not match the
new certificate) is logged once as a WARNING and the context in use is kept; the files are checked again after the
next interval. A reload never raises into the connecting library. Inline ``*_pem`` values never change.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evald.config.file_watch import FileWatch
from evald.config.tls_client import ClientTLSConfig, build_client_context

if TYPE_CHECKING:
    import requests

logger = logging.getLogger(__name__)


class ClientReloader:
    """Builds a new client context when the config's files change; ``poll`` is cheap when nothing is due."""

    def __init__(self, config: ClientTLSConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._watch = FileWatch(config.files(), float(config.reload_interval or 0.0), "TLS client", clock)
        self.current: ssl.SSLContext | None = None  # None: the original context is still the newest
        self.reloads = 0

    @property
    def failures(self) -> int:
        return self._watch.failures

    def poll(self) -> ssl.SSLContext | None:
        """The newest context built after a change, or None while the original one is current."""
        context = self._watch.poll(lambda: build_client_context(self._config))
        if context is not None:
            self.current = context
            self.reloads += 1
            logger.info("TLS client certificate/CA reloaded from %s", ", ".join(self._watch.paths))
        return self.current


class ClientSSLContext(ssl.SSLContext):
    """A client context that applies ``server_name_override`` and hands each new connection the newest context."""

    server_name_override: str | None = None
    reloader: ClientReloader | None = None

    def _target(self) -> ssl.SSLContext | None:
        if self.reloader is None:
            return None
        try:
            return self.reloader.poll()
        except Exception:  # a reload must never fail a connection: keep the context in use
            logger.exception("TLS client reload failed; keeping the context in use")
            return self.reloader.current

    def wrap_socket(
        self, sock: socket.socket, server_side: bool = False, do_handshake_on_connect: bool = True,
        suppress_ragged_eofs: bool = True, server_hostname: str | bytes | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLSocket:
        name = self.server_name_override or server_hostname
        target = self._target()
        if target is None:
            return super().wrap_socket(sock, server_side, do_handshake_on_connect, suppress_ragged_eofs, name, session)
        return target.wrap_socket(sock, server_side, do_handshake_on_connect, suppress_ragged_eofs, name, session)

    def wrap_bio(
        self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
        server_hostname: str | bytes | None = None, session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        name = self.server_name_override or server_hostname
        target = self._target()
        if target is None:
            return super().wrap_bio(incoming, outgoing, server_side, name, session)
        return target.wrap_bio(incoming, outgoing, server_side, name, session)


def client_ssl_context(config: ClientTLSConfig) -> ClientSSLContext:
    """The context for ``config`` (which must not be ``insecure``). Raises ``ValueError`` naming a bad key."""
    context = build_client_context(config, ClientSSLContext(ssl.PROTOCOL_TLS_CLIENT))
    assert isinstance(context, ClientSSLContext)
    context.server_name_override = config.server_name_override
    if config.reload_interval and config.files():
        context.reloader = ClientReloader(config)
    return context


def requests_session(config: ClientTLSConfig) -> requests.Session:
    """A ``requests.Session`` whose https:// connections use :func:`client_ssl_context` and nothing else.

    The OTel SDK's HTTP exporters pass ``verify``/``cert`` to every request (from their arguments or the
    ``OTEL_EXPORTER_OTLP_*`` variables); the adapter ignores both, so the ``tls`` block alone decides.
    """
    import requests
    from requests.adapters import HTTPAdapter

    context = client_ssl_context(config)
    cert_reqs = "CERT_NONE" if config.insecure_skip_verify else "CERT_REQUIRED"

    class _Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs, ssl_context=context, cert_reqs=cert_reqs)

        def build_connection_pool_key_attributes(
            self, request: Any, verify: Any, cert: Any = None
        ) -> tuple[dict[str, Any], dict[str, Any]]:
            host, pool = super().build_connection_pool_key_attributes(request, True, None)
            pool.update(ssl_context=context, cert_reqs=cert_reqs)
            return host, pool

        def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
            conn.cert_reqs, conn.ca_certs, conn.ca_cert_dir = cert_reqs, None, None

    session = requests.Session()
    session.mount("https://", _Adapter())
    return session
