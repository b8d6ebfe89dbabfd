"""ServerTLSConfig: the Collector's configtls server keys (files or inline PEM, versions), and the keys it refuses
with an explanation. Live handshakes: test_otlp_tls.py (TLS, mTLS) and test_tls_reload.py (rotation)."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.receivers.otlp import OTLPGrpcConfig
from evald.receivers.tls import ServerTLSConfig, security_label
from tests.receivers.secure_support import running
from tests.receivers.support import trace_request
from tests.receivers.tls_certs import Pki, make_pki

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _files(pki: Pki) -> dict[str, str]:
    return {"cert_file": str(pki.server_cert), "key_file": str(pki.server_key)}


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"ca_file": "CA"}, "for mTLS use `client_ca_file`"),
        ({"ca_pem": "x"}, "for mTLS use `client_ca_pem`"),
        ({"insecure_skip_verify": True}, "`insecure_skip_verify`: a client key"),
        ({"server_name_override": "evald"}, "`server_name_override`: a client key"),
        ({"cert_pem": "CERT_PEM"}, "set `cert_file` or `cert_pem`, not both"),
        ({"client_ca_file": "CA", "client_ca_pem": "x"}, "set `client_ca_file` or `client_ca_pem`, not both"),
        ({"min_version": "1.3", "max_version": "1.2"}, "`min_version` 1.3 is above `max_version` 1.2"),
        ({"client_ca_pem": "not a certificate"}, "cannot use `client_ca_pem`"),
        ({"reload_interval": "soon"}, "invalid duration"),
    ],
)
def test_refused_keys_and_combinations_say_why(pki: Pki, extra: dict[str, object], match: str) -> None:
    values = {"CA": str(pki.ca), "CERT_PEM": pki.server_cert.read_text()}
    block = {**_files(pki), **{k: values.get(v, v) if isinstance(v, str) else v for k, v in extra.items()}}
    with pytest.raises(ValidationError, match=match):
        ServerTLSConfig.model_validate(block)


def test_a_tls_block_without_a_certificate_is_refused() -> None:
    with pytest.raises(ValidationError, match="TLS needs `cert_file` and `key_file`"):
        ServerTLSConfig.model_validate({"min_version": "1.2"})


def test_inline_key_must_match_the_certificate(pki: Pki) -> None:
    with pytest.raises(ValidationError, match="cannot use `cert_pem` with `key_pem`"):
        ServerTLSConfig.model_validate({"cert_pem": pki.server_cert.read_text(), "key_pem": pki.client_key.read_text()})


def test_grpc_refuses_a_max_version_it_cannot_enforce(pki: Pki) -> None:
    with pytest.raises(ValidationError, match='must be "1.2" for OTLP/gRPC'):
        OTLPGrpcConfig.model_validate({"tls": {**_files(pki), "max_version": "1.2"}})
    assert OTLPGrpcConfig.model_validate({"tls": {**_files(pki), "max_version": "1.3"}}).tls is not None


def test_security_label_names_mtls_and_reload(pki: Pki) -> None:
    assert security_label(None) == "plaintext"
    assert security_label(ServerTLSConfig.model_validate(_files(pki))) == "TLS"
    mtls = ServerTLSConfig.model_validate({**_files(pki), "client_ca_pem": pki.ca.read_text(), "reload_interval": "1m"})
    assert security_label(mtls) == "mTLS, reload every 60s"


async def test_http_max_version_1_2_refuses_a_tls_1_3_only_client(pki: Pki) -> None:
    body = trace_request(1).SerializeToString()
    headers = {"Content-Type": "application/x-protobuf"}
    inline = {"cert_pem": pki.server_cert.read_text(), "key_pem": pki.server_key.read_text(), "max_version": "1.2"}
    async with running("http", tls=inline) as server:
        url = f"https://127.0.0.1:{server.port}/v1/traces"
        modern = ssl.create_default_context(cafile=str(pki.ca))
        modern.minimum_version = ssl.TLSVersion.TLSv1_3
        async with httpx.AsyncClient(verify=modern, timeout=10) as client:
            with pytest.raises(httpx.ConnectError):
                await client.post(url, content=body, headers=headers)
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(pki.ca)), timeout=10) as client:
            response = await client.post(url, content=body, headers=headers)
        assert response.status_code == 200 and len(server.consumer.spans) == 1


def test_collector_shaped_tls_block_loads_through_protocols(pki: Pki, tmp_path: Path) -> None:
    text = f"""
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:0
        tls: {{cert_file: {pki.server_cert}, key_file: {pki.server_key}, client_ca_file: {pki.ca},
               reload_interval: 5m}}
"""
    cfg = parse_config(text, environ={})
    otlp = cfg.receivers["otlp"]
    assert otlp.grpc.tls.reload_interval == 300.0 and otlp.http is None  # type: ignore[attr-defined]
    bad = text.replace(f"key_file: {pki.server_key}", f"key_file: {tmp_path / 'missing.key'}")
    with pytest.raises(ConfigError) as info:
        parse_config(bad, environ={})
    assert "receivers.otlp.protocols.grpc.tls.key_file" in str(info.value)
