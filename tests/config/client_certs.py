"""Throwaway PKI for the client TLS tests: a CA, a server certificate for a chosen host name and a client certificate.

Generated with ``cryptography`` at test time (P-256 keys, valid for one day), written as PEM files. The server
certificate names only ``host`` (not 127.0.0.1), so a client connecting to 127.0.0.1 must be told that name.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from tests.receivers.tls_certs import _ca, _name, _write_cert, _write_key


@dataclass(frozen=True)
class ClientPki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    host: str


def leaf(common_name: str, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, *, dns: str | None
         ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate signed by ``ca``: a server certificate for ``dns``, or a client certificate when None."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if dns else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if dns:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def make_client_pki(directory: Path, host: str = "collector.internal", prefix: str = "") -> ClientPki:
    """A fresh CA with a server certificate for ``host`` and a client certificate, under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = _ca(f"evald client-test CA {prefix}")
    server, server_key = leaf(host, ca, ca_key, dns=host)
    client, client_key = leaf("evald", ca, ca_key, dns=None)
    return ClientPki(
        ca=_write_cert(directory / f"{prefix}ca.crt", ca),
        server_cert=_write_cert(directory / f"{prefix}server.crt", server),
        server_key=_write_key(directory / f"{prefix}server.key", server_key),
        client_cert=_write_cert(directory / f"{prefix}client.crt", client),
        client_key=_write_key(directory / f"{prefix}client.key", client_key),
        host=host,
    )
