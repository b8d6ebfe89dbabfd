"""Server-side TLS and mTLS for the OTLP receivers: the ``tls`` block of ``receivers.otlp.grpc|http``.

Config keys (``tls: null``, the default, serves plaintext)::

    tls:
      cert_file: /etc/evald/tls/tls.crt   # server certificate chain, PEM (required)
      key_file: /etc/evald/tls/tls.key    # its private key, PEM (required)
      client_ca_file: null                # set -> mTLS: clients must present a certificate signed by this CA
      min_version: "1.2"                  # "1.2" | "1.3" (OTLP/gRPC: only "1.2"; grpcio has no knob for it)

Failure semantics: every problem is a config error at load time, naming the key: a file that is missing or
unreadable, a key without a certificate (or the reverse), a key that does not match the certificate, a CA file
holding no certificate. Files are read once, when the receiver starts; rotating a certificate needs a restart
(``docs/security.md``). At run time a client that does not complete the handshake (plaintext, untrusted or
missing client certificate under mTLS) never reaches the receiver: gRPC and aiohttp drop the connection.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from evald.config.base import ComponentConfig

_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


class ServerTLSConfig(ComponentConfig):
    cert_file: str = Field(description="PEM file with the server certificate chain (leaf first).")
    key_file: str = Field(description="PEM file with the private key of `cert_file` (unencrypted).")
    client_ca_file: str | None = Field(
        None, description="PEM CA bundle; when set, clients must present a certificate it signed (mTLS)."
    )
    min_version: Literal["1.2", "1.3"] = Field("1.2", description="Lowest TLS version accepted.")

    @model_validator(mode="before")
    @classmethod
    def _pairs(cls, data: object) -> object:
        if isinstance(data, dict):
            if data.get("key_file") and not data.get("cert_file"):
                raise ValueError("`key_file` is set but `cert_file` is missing: both are needed for TLS")
            if data.get("cert_file") and not data.get("key_file"):
                raise ValueError("`cert_file` is set but `key_file` is missing: both are needed for TLS")
        return data

    @field_validator("cert_file", "key_file", "client_ca_file")
    @classmethod
    def _readable(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip():
            raise ValueError("must be a file path, not an empty string")
        try:
            with Path(value).open("rb"):
                pass
        except OSError as err:
            raise ValueError(f"cannot read {value!r}: {err.strerror or err}") from None
        return value

    @model_validator(mode="after")
    def _loads(self) -> Self:
        # Building the context reads and checks everything (PEM syntax, key matches certificate, CA certificates).
        server_ssl_context(self)
        return self

    def read_pem(self) -> tuple[bytes, bytes, bytes | None]:
        """``(certificate chain, private key, client CA or None)`` as bytes, for ``grpc.ssl_server_credentials``."""
        ca = Path(self.client_ca_file).read_bytes() if self.client_ca_file else None
        return Path(self.cert_file).read_bytes(), Path(self.key_file).read_bytes(), ca


def server_ssl_context(config: ServerTLSConfig) -> ssl.SSLContext:
    """An ``ssl.SSLContext`` for a server socket; ``CERT_REQUIRED`` with ``client_ca_file`` (mTLS).

    Raises ``ValueError`` naming the key whose file cannot be used.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _VERSIONS[config.min_version]
    try:
        context.load_cert_chain(config.cert_file, config.key_file)
    except (ssl.SSLError, OSError) as err:
        raise ValueError(
            f"cannot use `cert_file` {config.cert_file!r} with `key_file` {config.key_file!r} "
            f"(not PEM, or the key does not match the certificate): {_reason(err)}"
        ) from None
    if config.client_ca_file:
        try:
            context.load_verify_locations(cafile=config.client_ca_file)
        except (ssl.SSLError, OSError) as err:
            raise ValueError(f"cannot use `client_ca_file` {config.client_ca_file!r}: {_reason(err)}") from None
        if not context.get_ca_certs():
            raise ValueError(f"`client_ca_file` {config.client_ca_file!r} holds no CA certificate")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def security_label(config: ServerTLSConfig | None) -> str:
    """How a receiver serves, for its start log line: ``plaintext``, ``TLS`` or ``mTLS``."""
    return "plaintext" if config is None else "mTLS" if config.client_ca_file else "TLS"


def _reason(err: Exception) -> str:
    return str(getattr(err, "reason", None) or getattr(err, "strerror", None) or err)
