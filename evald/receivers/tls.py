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
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.config.tls_client import readable_path

_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}
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
        for file_key, pem_key in _SOURCES:
            if data.get(file_key) and data.get(pem_key):
                raise ValueError(f"set `{file_key}` or `{pem_key}`, not both")
        has_cert = bool(data.get("cert_file") or data.get("cert_pem"))
        has_key = bool(data.get("key_file") or data.get("key_pem"))
        if has_key and not has_cert:
            raise ValueError("`key_file` is set but `cert_file` is missing: both are needed for TLS (or `cert_pem`)")
        if has_cert and not has_key:
            raise ValueError("`cert_file` is set but `key_file` is missing: both are needed for TLS (or `key_pem`)")
        if not has_cert:
            raise ValueError("TLS needs `cert_file` and `key_file` (or inline `cert_pem` and `key_pem`)")
        return data

    @field_validator("cert_file", "key_file", "client_ca_file")
    @classmethod
    def _readable(cls, value: str | None) -> str | None:
        return readable_path(value)

    @model_validator(mode="after")
    def _loads(self) -> Self:
        if self.max_version is not None and _VERSIONS[self.max_version] < _VERSIONS[self.min_version]:
            raise ValueError(f"`min_version` {self.min_version} is above `max_version` {self.max_version}")
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

    def read_pem(self) -> tuple[bytes, bytes, bytes | None]:
        """``(certificate chain, private key, client CA or None)`` as bytes, for ``grpc.ssl_server_credentials``."""
        material = self.read_material()
        return material.cert, material.key, material.client_ca


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
    context.minimum_version = _VERSIONS[config.min_version]
    if config.max_version is not None:
        context.maximum_version = _VERSIONS[config.max_version]
    cert_key = "cert_file" if config.cert_file else "cert_pem"
    key_key = "key_file" if config.key_file else "key_pem"
    try:
        if config.cert_file and config.key_file:
            context.load_cert_chain(config.cert_file, config.key_file)
        else:
            _load_chain_from_pem(context, config)
    except (ssl.SSLError, OSError) as err:
        raise ValueError(
            f"cannot use `{cert_key}` with `{key_key}` (not PEM, or the key does not match the certificate)"
            f"{_files(config.cert_file, config.key_file)}: {_reason(err)}"
        ) from None
    if config.client_ca_file or config.client_ca_pem is not None:
        ca_key = "client_ca_file" if config.client_ca_file else "client_ca_pem"
        try:
            if config.client_ca_file:
                context.load_verify_locations(cafile=config.client_ca_file)
            else:
                context.load_verify_locations(cadata=config.client_ca_pem)
        except (ssl.SSLError, OSError, ValueError) as err:
            raise ValueError(f"cannot use `{ca_key}`{_files(config.client_ca_file)}: {_reason(err)}") from None
        if not context.get_ca_certs():
            raise ValueError(f"`{ca_key}`{_files(config.client_ca_file)} holds no CA certificate")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def security_label(config: ServerTLSConfig | None) -> str:
    """How a receiver serves, for its start log line: ``plaintext``, ``TLS`` or ``mTLS``."""
    if config is None:
        return "plaintext"
    label = "mTLS" if config.client_ca_file or config.client_ca_pem else "TLS"
    return f"{label}, reload every {config.reload_interval:g}s" if config.reload_interval and config.files() else label


def _load_chain_from_pem(context: ssl.SSLContext, config: ServerTLSConfig) -> None:
    """``load_cert_chain`` reads only files: inline PEM goes through a private temporary directory, removed at once."""
    material = config.read_material()
    with tempfile.TemporaryDirectory(prefix="evald-tls-") as directory:  # mode 0700
        cert, key = Path(directory) / "tls.crt", Path(directory) / "tls.key"
        cert.write_bytes(material.cert if config.cert_pem is not None else b"")
        key.touch(mode=0o600)
        key.write_bytes(material.key)
        context.load_cert_chain(config.cert_file or cert, config.key_file or key)


def _files(*paths: str | None) -> str:
    named = [repr(p) for p in paths if p]
    return f" ({', '.join(named)})" if named else ""


def _reason(err: Exception) -> str:
    return str(getattr(err, "reason", None) or getattr(err, "strerror", None) or err)
