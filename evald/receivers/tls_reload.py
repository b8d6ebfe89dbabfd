"""Certificate reload without a restart: ``tls.reload_interval`` of ``receivers.otlp.grpc|http`` (tls.py).

Config keys: ``reload_interval`` in the receiver's ``tls`` block (the Collector's name); ``null`` or 0 = never.

How it works, like the Collector's (lazily, at a handshake; no background task): when a new connection arrives and
at least ``reload_interval`` has passed since the last check, the files (``cert_file``, ``key_file``,
``client_ca_file``) are stat'ed; if any changed (mtime, size or inode, which also catches the symlink swap of a
Kubernetes Secret volume), they are read and a new server context is built from them. Contents identical to the
ones in use change nothing. The new certificate, key and client CA serve that connection and every later one;
established connections keep theirs.

- OTLP/HTTP: the listening ``ssl.SSLContext`` gets an ``sni_callback`` (OpenSSL calls it for every ClientHello,
  with or without SNI) that switches the connection to the newest context.
- OTLP/gRPC: ``grpc.dynamic_ssl_server_credentials`` with a fetcher that grpc calls before every handshake; it
  returns a new ``ServerCertificateConfiguration`` after a change, None otherwise. Whether a client certificate is
  required is fixed when the server starts (a config change, not a rotation).

Failure semantics: a change that cannot be used (a file missing or half written, a key that does not match the new
certificate) is logged as a WARNING and the certificate in use is kept; the files are checked again after the next
interval, so a rotation finished later is picked up. A reload never fails a handshake and never raises into the
server. Successful reloads are logged at INFO. Inline ``*_pem`` values never change, so nothing is reloaded for them.
The checking itself (interval, change detection, failures) is evald/config/file_watch.py, shared with the clients.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evald.config.file_watch import FileWatch

if TYPE_CHECKING:
    import grpc

    from evald.receivers.tls import ServerTLSConfig, TLSMaterial

logger = logging.getLogger(__name__)

class CertificateReloader:
    """Rebuilds the server context of a ``ServerTLSConfig`` when its files change (see the module docstring).

    ``poll`` is cheap when nothing is due (one clock read) and safe from any thread (grpc calls it from its own);
    it returns the new ``(material, context)`` after a usable change, else None.
    """

    def __init__(self, config: ServerTLSConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._watch = FileWatch(config.files(), float(config.reload_interval or 0.0), "receiver", clock)
        self.material: TLSMaterial = config.read_material()
        self.reloads = 0

    @property
    def failures(self) -> int:
        return self._watch.failures

    def poll(self) -> tuple[TLSMaterial, ssl.SSLContext] | None:
        loaded = self._watch.poll(self._load)
        if loaded is None or loaded[0] == self.material:
            return None
        self.material = loaded[0]
        self.reloads += 1
        logger.info("TLS certificate reloaded from %s", ", ".join(self._watch.paths))
        return loaded

    def _load(self) -> tuple[TLSMaterial, ssl.SSLContext]:
        from evald.receivers.tls import build_ssl_context

        context = build_ssl_context(self._config)
        return self._config.read_material(), context


def install_reloader(context: ssl.SSLContext, config: ServerTLSConfig) -> CertificateReloader:
    """Make every new connection on ``context`` (a listening server context) use the newest certificate."""
    reloader = CertificateReloader(config)
    newest: list[ssl.SSLContext] = []

    def switch(ssl_object: Any, _server_name: str | None, _context: ssl.SSLContext) -> int | None:
        try:
            reloaded = reloader.poll()
            if reloaded is not None:
                newest[:] = [reloaded[1]]
            if newest:
                ssl_object.context = newest[0]
        except Exception:  # a reload must never fail a handshake: keep serving the current certificate
            logger.exception("TLS certificate reload failed; keeping the certificate in use")
        return None

    context.sni_callback = switch
    return reloader


def grpc_server_credentials(config: ServerTLSConfig) -> grpc.ServerCredentials:
    """Server credentials for ``grpc.aio.server``: static, or reloading with ``reload_interval`` (see above)."""
    import grpc

    if not (config.reload_interval and config.files()):
        material = config.read_material()
        return grpc.ssl_server_credentials([(material.key, material.cert)], root_certificates=material.client_ca,
                                           require_client_auth=material.client_ca is not None)
    reloader = CertificateReloader(config)
    require = reloader.material.client_ca is not None

    def fetch() -> Any:
        try:
            reloaded = reloader.poll()
        except Exception:  # never raise into grpc's handshake
            logger.exception("TLS certificate reload failed; keeping the certificate in use")
            return None
        if reloaded is None:
            return None
        new = reloaded[0]
        return grpc.ssl_server_certificate_configuration([(new.key, new.cert)], root_certificates=new.client_ca)

    initial = grpc.ssl_server_certificate_configuration([(reloader.material.key, reloader.material.cert)],
                                                        root_certificates=reloader.material.client_ca)
    return grpc.dynamic_ssl_server_credentials(initial, fetch, require_client_authentication=require)
