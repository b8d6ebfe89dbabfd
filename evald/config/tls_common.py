"""What the server TLS model (receivers/tls.py) and the client TLS model (config/tls_client.py) check and load alike.

No config keys of its own: helpers for the ``tls`` blocks' shared keys (``*_file`` or ``*_pem``, ``cert``/``key``
pairing, ``min_version``/``max_version``, loading a CA bundle or a certificate chain into an ``ssl.SSLContext``).

Failure semantics: each helper raises ``ValueError`` naming the key, which pydantic reports as a config error.
"""

from __future__ import annotations

import ssl
import tempfile
from pathlib import Path
from typing import Any

VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def readable_path(value: str | None) -> str | None:
    """A TLS file setting: ``None``, or a path that can be opened now (a ValueError naming the file otherwise)."""
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


def check_sources(data: dict[str, Any], sources: tuple[tuple[str, str], ...]) -> None:
    """Each ``(file key, pem key)`` pair: one of them, not both."""
    for file_key, pem_key in sources:
        if data.get(file_key) and data.get(pem_key):
            raise ValueError(f"set `{file_key}` or `{pem_key}`, not both")


def check_cert_key_pair(data: dict[str, Any], need: str) -> bool:
    """A certificate and its key come together (``need`` says why, e.g. "both are needed for TLS"); True if set."""
    has_cert = bool(data.get("cert_file") or data.get("cert_pem"))
    has_key = bool(data.get("key_file") or data.get("key_pem"))
    if has_key and not has_cert:
        raise ValueError(f"`key_file` is set but `cert_file` is missing: {need} (or `cert_pem`)")
    if has_cert and not has_key:
        raise ValueError(f"`cert_file` is set but `key_file` is missing: {need} (or `key_pem`)")
    return has_cert


def check_versions(min_version: str, max_version: str | None) -> None:
    if max_version is not None and VERSIONS[max_version] < VERSIONS[min_version]:
        raise ValueError(f"`min_version` {min_version} is above `max_version` {max_version}")


def set_versions(context: ssl.SSLContext, min_version: str, max_version: str | None) -> None:
    context.minimum_version = VERSIONS[min_version]
    if max_version is not None:
        context.maximum_version = VERSIONS[max_version]


def load_ca(context: ssl.SSLContext, path: str | None, pem: str | None, name: str) -> None:
    """Trust the CA bundle in ``path`` or ``pem`` (keys ``{name}_file``/``{name}_pem``); it must hold a CA."""
    ca_key = f"{name}_file" if path else f"{name}_pem"
    try:
        if path:
            context.load_verify_locations(cafile=path)
        else:
            context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, OSError, ValueError) as err:
        raise ValueError(f"cannot use `{ca_key}`{_files(path)}: {_reason(err)}") from None
    if not context.get_ca_certs():
        raise ValueError(f"`{ca_key}`{_files(path)} holds no CA certificate")


def load_chain(
    context: ssl.SSLContext, cert_file: str | None, cert_pem: str | None, key_file: str | None, key_pem: str | None
) -> None:
    """Load the certificate chain and its key, each from its file or inline PEM.

    ``load_cert_chain`` reads only files: inline PEM goes through a private temporary directory, removed at once.
    """
    cert_key = "cert_file" if cert_file else "cert_pem"
    key_key = "key_file" if key_file else "key_pem"
    try:
        if cert_file and key_file:
            context.load_cert_chain(cert_file, key_file)
        else:
            with tempfile.TemporaryDirectory(prefix="evald-tls-") as directory:  # mode 0700
                cert_path, key_path = Path(directory) / "tls.crt", Path(directory) / "tls.key"
                cert_path.write_bytes(b"" if cert_file else (cert_pem or "").encode())
                key_path.touch(mode=0o600)
                key_path.write_bytes(b"" if key_file else (key_pem or "").encode())
                context.load_cert_chain(cert_file or cert_path, key_file or key_path)
    except (ssl.SSLError, OSError) as err:
        raise ValueError(
            f"cannot use `{cert_key}` with `{key_key}` (not PEM, or the key does not match the certificate)"
            f"{_files(cert_file, key_file)}: {_reason(err)}"
        ) from None


def _files(*paths: str | None) -> str:
    named = [repr(p) for p in paths if p]
    return f" ({', '.join(named)})" if named else ""


def _reason(err: Exception) -> str:
    return str(getattr(err, "reason", None) or getattr(err, "strerror", None) or err)
