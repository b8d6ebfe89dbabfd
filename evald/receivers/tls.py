"""Server-side TLS and mTLS for the OTLP receivers: the ``tls`` block of ``receivers.otlp.grpc|http``.

Config keys (the Collector's configtls server keys; ``tls: null``, the default, serves plaintext)::

    tls:
      cert_file: /etc/evald/tls/tls.crt   # server certificate chain, PEM (or cert_pem: inline PEM)
      key_file: /etc/evald/tls/tls.key    # its private key, PEM, unencrypted (or key_pem)
      client_ca_file: null                # set -> mTLS: clients must present a certificate this CA signed
                                          # (or client_ca_pem)
      min_version: "1.2"                  # "1.2" | "1.3" (OTLP/gRPC: only "1.2"; grpcio has no knob for it)
      max_version: null                   # "1.2" | "1.3"; null: the highest the library supports
      reload_interval: null               # e.g. 1m: re-read changed files without a restart (tls_reload.py)

``ca_file``/``ca_pem`` are refused on a receiver: on a server they would not make clients present a certificate
(the Collector only sets root CAs from them, which a server does not use); ``client_ca_file`` turns on mTLS.
``insecure_skip_verify`` and ``server_name_override`` are client keys; a receiver is a server, so they are refused
with that explanation rather than as unknown keys.

Failure semantics: every problem is a config error at load time, naming the key: a file that is missing or
unreadable, a key without a certificate (or the reverse), a key that does not match the certificate, a CA holding
no certificate, a file and an inline PEM for the same thing, min_version above max_version. With
``reload_interval`` the files are checked again at most once per interval, at a new connection's handshake; a
change that cannot be used (a half-written rotation) is logged and the previous certificate kept until the files are
whole again (tls_reload.py). Without it files are read once, when the receiver starts. At run time a client that
does not complete the handshake (plaintext, untrusted or missing client certificate under mTLS) never reaches the
receiver: gRPC and aiohttp drop the connection.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.config.tls_common import (
    check_cert_key_pair,
    check_sources,
    check_versions,
    load_ca,
    load_chain,
    readable_path,
    set_versions,
)

_CLIENT_ONLY = {
    "insecure_skip_verify": "a client key (skip checking the server's certificate); a receiver is a server: remove it",
    "server_name_override": "a client key (the name to check in the server's certificate); a receiver is a server: "
                            "remove it",
    "ca_file": "on a receiver `ca_file` does not make clients present a certificate (the Collector only sets root CAs "
               "from it, which a server never uses): for mTLS use `client_ca_file`, otherwise remove it",
    "ca_pem": "on a receiver `ca_pem` does not make clients present a certificate: for mTLS use `client_ca_pem`, "
              "otherwise remove it",
}
_SOURCES = (("cert_file", "cert_pem"), ("key_file", "key_pem"), ("client_ca_file", "client_ca_pem"))


@dataclass(frozen=True, slots=True)
class TLSMaterial:
    """The PEM bytes a server context is built from: certificate chain, private key, client CA (mTLS) or None."""

    cert: bytes
    key: bytes
    client_ca: bytes | None


class ServerTLSConfig(ComponentConfig):
    cert_file: str | None = Field(None, description="PEM file with the server certificate chain (leaf first).")
    cert_pem: str | None = Field(None, description="The certificate chain as inline PEM (instead of `cert_file`).")
    key_file: str | None = Field(None, description="PEM file with the private key of the certificate (unencrypted).")
    key_pem: str | None = Field(None, description="The private key as inline PEM (instead of `key_file`).")
    client_ca_file: str | None = Field(
        None, description="PEM CA bundle; when set, clients must present a certificate it signed (mTLS)."
    )
    client_ca_pem: str | None = Field(None, description="The client CA bundle as inline PEM (mTLS).")
    min_version: Literal["1.2", "1.3"] = Field("1.2", description="Lowest TLS version accepted.")
    max_version: Literal["1.2", "1.3"] | None = Field(
        None, description="Highest TLS version accepted; `null`: the highest supported (OTLP/HTTP only)."
    )
    reload_interval: Duration | None = Field(
        None, description="Check the files for changes at most this often (at a new connection) and use the new "
        "certificate, key and client CA without a restart; `null`/0: read once at start."
    )

    @model_validator(mode="before")
    @classmethod
    def _keys_and_pairs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for key, why in _CLIENT_ONLY.items():
            if key in data:
                raise ValueError(f"`{key}`: {why}")
        check_sources(data, _SOURCES)
        if not check_cert_key_pair(data, "both are needed for TLS"):
            raise ValueError("TLS needs `cert_file` and `key_file` (or inline `cert_pem` and `key_pem`)")
        return data

    @field_validator("cert_file", "key_file", "client_ca_file")
    @classmethod
    def _readable(cls, value: str | None) -> str | None:
        return readable_path(value)

    @model_validator(mode="after")
    def _loads(self) -> Self:
        check_versions(self.min_version, self.max_version)
        # Building the context reads and checks everything (PEM syntax, key matches certificate, CA certificates).
        server_ssl_context(self, reload=False)
        return self

    def files(self) -> tuple[str, ...]:
        """The files this config reads (what a reload watches)."""
        return tuple(f for f in (self.cert_file, self.key_file, self.client_ca_file) if f)

    def read_material(self) -> TLSMaterial:
        """The PEM bytes, from the files or the inline PEM. Raises ``OSError`` when a file cannot be read."""
        def source(path: str | None, pem: str | None) -> bytes | None:
            return Path(path).read_bytes() if path else pem.encode() if pem is not None else None

        cert, key = source(self.cert_file, self.cert_pem), source(self.key_file, self.key_pem)
        assert cert is not None and key is not None  # _keys_and_pairs
        return TLSMaterial(cert, key, source(self.client_ca_file, self.client_ca_pem))


def server_ssl_context(config: ServerTLSConfig, *, reload: bool = True) -> ssl.SSLContext:
    """An ``ssl.SSLContext`` for a server socket; ``CERT_REQUIRED`` with a client CA (mTLS).

    With ``reload`` and ``config.reload_interval``, the context switches every new connection to a context built
    from the files as they are now (checked at most once per interval; tls_reload.py). Raises ``ValueError`` naming
    the key whose file or PEM cannot be used.
    """
    context = build_ssl_context(config)
    if reload and config.reload_interval and config.files():
        from evald.receivers.tls_reload import install_reloader

        install_reloader(context, config)
    return context


def build_ssl_context(config: ServerTLSConfig) -> ssl.SSLContext:
    """A server context from the config's files and PEM as they are now. Raises ``ValueError`` naming the key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    set_versions(context, config.min_version, config.max_version)
    load_chain(context, config.cert_file, config.cert_pem, config.key_file, config.key_pem)
    if config.client_ca_file or config.client_ca_pem is not None:
        load_ca(context, config.client_ca_file, config.client_ca_pem, "client_ca")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def security_label(config: ServerTLSConfig | None) -> str:
    """How a receiver serves, for its start log line: ``plaintext``, ``TLS`` or ``mTLS``."""
    if config is None:
        return "plaintext"
    label = "mTLS" if config.client_ca_file or config.client_ca_pem else "TLS"
    return f"{label}, reload every {config.reload_interval:g}s" if config.reload_interval and config.files() else label
