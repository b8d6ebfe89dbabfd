"""Client-side TLS for evald's outgoing connections: the ``tls`` block of the otlp exporter and of Kafka ``auth``.

Config keys (the Collector's configtls client keys, same names and rules)::

    tls:
      insecure: false              # true: plaintext (no other key may be set then)
      ca_file: /etc/evald/ca.crt   # CA bundle that signs the server's certificate (or ca_pem: inline PEM);
                                   # neither: the system's trust store
      include_system_ca_certs_pool: false  # true: trust the system's store as well as ca_file / ca_pem
      cert_file: null              # client certificate chain for mTLS (or cert_pem); needs key_file / key_pem
      key_file: null               # its private key, PEM, unencrypted (or key_pem)
      insecure_skip_verify: false  # TLS without checking the server's certificate (testing only)
      server_name_override: null   # the name sent as SNI and checked in the server's certificate
      min_version: "1.2"           # "1.2" | "1.3"
      max_version: null            # "1.2" | "1.3"; null: the highest the library supports
      reload_interval: null        # e.g. 1m: re-read changed files for new connections (tls_client_context.py)

Which keys a transport supports is checked by its component: grpc's Python channel credentials cannot skip
verification or set TLS versions, so the otlp exporter refuses ``insecure_skip_verify`` and a non-default
``min_version``/``max_version`` with ``protocol: grpc`` (``supported_by_grpc``); its ``reload_interval`` rebuilds
the grpc exporter (evald/exporters/otlp_reload.py).

Failure semantics: every problem is a config error at load time, naming the key: a file and an inline PEM for the
same thing, a key without a certificate (or the reverse), ``insecure: true`` with any TLS setting, a file that
cannot be read, PEM that does not parse, a key that does not match its certificate, a CA holding no certificate,
``min_version`` above ``max_version``. At run time a server whose certificate does not verify fails the handshake
of that connection; the component retries as it does for any network error.
"""

from __future__ import annotations

import os
import ssl
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

_SOURCES = (("ca_file", "ca_pem"), ("cert_file", "cert_pem"), ("key_file", "key_pem"))
#: Keys that configure TLS: none may be set with ``insecure: true`` (plaintext).
_TLS_KEYS = ("ca_file", "ca_pem", "include_system_ca_certs_pool", "cert_file", "cert_pem", "key_file", "key_pem",
             "insecure_skip_verify", "server_name_override", "min_version", "max_version", "reload_interval")


class ClientTLSConfig(ComponentConfig):
    insecure: bool = Field(
        False, description="Plaintext, no TLS (no other `tls` key may be set then); an otlp `endpoint` with an "
        "http:// or https:// scheme decides itself."
    )
    ca_file: str | None = Field(
        None, description="PEM CA bundle that signs the server's certificate; unset: the system's trust store."
    )
    ca_pem: str | None = Field(None, description="The CA bundle as inline PEM (instead of `ca_file`).")
    include_system_ca_certs_pool: bool = Field(
        False, description="Trust the system's CA store as well as `ca_file`/`ca_pem` (without them it is used anyway)."
    )
    cert_file: str | None = Field(None, description="PEM client certificate chain for mTLS (needs `key_file`).")
    cert_pem: str | None = Field(None, description="The client certificate as inline PEM (instead of `cert_file`).")
    key_file: str | None = Field(None, description="PEM private key of the client certificate (unencrypted).")
    key_pem: str | None = Field(None, description="The private key as inline PEM (instead of `key_file`).")
    insecure_skip_verify: bool = Field(
        False, description="TLS without verifying the server's certificate or name (testing only)."
    )
    server_name_override: str | None = Field(
        None, min_length=1, description="Name sent as SNI and checked in the server's certificate (default: the host)."
    )
    min_version: Literal["1.2", "1.3"] = Field("1.2", description="Lowest TLS version offered.")
    max_version: Literal["1.2", "1.3"] | None = Field(
        None, description="Highest TLS version offered; `null`: the highest supported."
    )
    reload_interval: Duration | None = Field(
        None, description="Check the files for changes at most this often and use the new CA, certificate and key "
        "for new connections; `null`/0: read once at start."
    )

    @model_validator(mode="before")
    @classmethod
    def _pairs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("insecure") is True:
            clash = [k for k in _TLS_KEYS if data.get(k) not in (None, False)]
            if clash:
                keys = ", ".join(f"`{k}`" for k in clash)
                raise ValueError(f"`insecure: true` means plaintext, so {keys} cannot apply: remove "
                                 f"{'it' if len(clash) == 1 else 'them'}, or drop `insecure` to use TLS")
        check_sources(data, _SOURCES)
        check_cert_key_pair(data, "a client certificate needs both")
        return data

    @field_validator("ca_file", "cert_file", "key_file")
    @classmethod
    def _readable(cls, value: str | None) -> str | None:
        return readable_path(value)

    @model_validator(mode="after")
    def _loads(self) -> Self:
        check_versions(self.min_version, self.max_version)
        if not self.insecure and (self.has_ca or self.has_client_certificate):
            build_client_context(self)  # reads and checks every file and PEM, naming the key (the system store
            # is not loaded to validate a block without them: 16 ms for every default otlp `tls`)
        return self

    @property
    def has_client_certificate(self) -> bool:
        return bool(self.cert_file or self.cert_pem)

    @property
    def has_ca(self) -> bool:
        return bool(self.ca_file or self.ca_pem)

    def files(self) -> tuple[str, ...]:
        """The files this config reads (what a reload watches)."""
        return tuple(f for f in (self.ca_file, self.cert_file, self.key_file) if f)

    def read_pem(self) -> tuple[bytes | None, bytes | None, bytes | None]:
        """``(CA bundle, client certificate chain, private key)`` as PEM bytes, None where unset (for grpc).

        With ``include_system_ca_certs_pool`` the CA bundle is followed by the system's bundle file."""
        def source(path: str | None, pem: str | None) -> bytes | None:
            return Path(path).read_bytes() if path else pem.encode() if pem else None

        ca = source(self.ca_file, self.ca_pem)
        if ca is not None and self.include_system_ca_certs_pool:
            ca = ca.rstrip(b"\n") + b"\n" + system_ca_bundle()
        return ca, source(self.cert_file, self.cert_pem), source(self.key_file, self.key_pem)

    def supported_by_grpc(self, prefix: str = "") -> list[str]:
        """Problems with this config on a grpc channel (empty when it can be used), each naming its key (after
        ``prefix``, e.g. ``tls.``)."""
        p = prefix
        problems = []
        if self.insecure_skip_verify:
            problems.append(f"`{p}insecure_skip_verify` is not supported with protocol grpc (grpc's Python channel "
                            "credentials always verify the server): use `ca_file`/`ca_pem` with the server's CA, "
                            "or protocol http/protobuf")
        if self.min_version != "1.2" or self.max_version is not None:
            problems.append(f"`{p}min_version`/`{p}max_version` are not supported with protocol grpc (grpcio has no "
                            "client option for the TLS version; it offers 1.2 and 1.3): remove them, or use "
                            "protocol http/protobuf")
        return problems


def build_client_context(config: ClientTLSConfig, context: ssl.SSLContext | None = None) -> ssl.SSLContext:
    """Configure ``context`` (default: a new client context) from the files and PEM as they are now.

    Raises ``ValueError`` naming the key whose file or PEM cannot be used.
    """
    context = context if context is not None else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    set_versions(context, config.min_version, config.max_version)
    if config.has_ca:
        load_ca(context, config.ca_file, config.ca_pem, "ca")
        if config.include_system_ca_certs_pool:
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if config.has_client_certificate:
        load_chain(context, config.cert_file, config.cert_pem, config.key_file, config.key_pem)
    if config.insecure_skip_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def system_ca_bundle() -> bytes:
    """The system's CA bundle as PEM (what ``load_default_certs`` reads; grpc needs the bytes), empty if none."""
    paths = ssl.get_default_verify_paths()
    for path in (os.environ.get(paths.openssl_cafile_env), paths.cafile, paths.openssl_cafile):
        if path and Path(path).is_file():
            return Path(path).read_bytes()
    return b""
