"""The client ``tls`` block (evald/config/tls_client.py): the Collector's configtls rules, with errors naming the
YAML keys, for the otlp exporter and both Kafka components, checked through the real config loader."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from evald.config.loader import parse_config
from evald.config.tls_client import ClientTLSConfig, build_client_context
from evald.errors import ConfigError
from tests.config.client_certs import ClientPki, make_client_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> ClientPki:
    return make_client_pki(tmp_path_factory.mktemp("pki"))


def problems(yaml_text: str) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        parse_config(yaml_text, environ={})
    return info.value.problems


def otlp(tls: str, protocol: str = "http/protobuf") -> str:
    return f"exporters:\n  otlp: {{ endpoint: 'collector:4318', protocol: {protocol}, tls: {tls} }}\n"


def kafka_receiver(tls: str) -> str:
    return f"receivers:\n  kafka: {{ auth: {{ tls: {tls} }} }}\n"


def kafka_exporter(tls: str) -> str:
    return f"exporters:\n  kafka: {{ auth: {{ tls: {tls} }} }}\n"


@pytest.mark.parametrize(
    ("tls", "message"),
    [
        ("{ ca_file: '{ca}', ca_pem: '{ca_text}' }", "set `ca_file` or `ca_pem`, not both"),
        ("{ cert_file: '{cert}', cert_pem: '{cert_text}', key_file: '{key}' }",
         "set `cert_file` or `cert_pem`, not both"),
        ("{ cert_file: '{cert}', key_file: '{key}', key_pem: '{key_text}' }", "set `key_file` or `key_pem`, not both"),
        ("{ cert_file: '{cert}' }", "`cert_file` is set but `key_file` is missing"),
        ("{ key_pem: '{key_text}' }", "`key_file` is set but `cert_file` is missing"),
        ("{ insecure: true, ca_file: '{ca}' }", "`insecure: true` means plaintext, so `ca_file` cannot apply"),
        ("{ insecure: true, insecure_skip_verify: true, server_name_override: x }",
         "so `insecure_skip_verify`, `server_name_override` cannot apply"),
        ("{ min_version: '1.3', max_version: '1.2' }", "`min_version` 1.3 is above `max_version` 1.2"),
        ("{ cert_file: '{key}', key_file: '{cert}' }", "cannot use `cert_file` with `key_file`"),
        ("{ ca_pem: 'not a certificate' }", "cannot use `ca_pem`"),
        ("{ cert_pem: '{cert_text}', key_pem: '{other_key_text}' }", "cannot use `cert_pem` with `key_pem`"),
    ],
)
@pytest.mark.parametrize(("shape", "path"), [(otlp, "exporters.otlp.tls"), (kafka_receiver, "receivers.kafka.auth.tls"),
                                             (kafka_exporter, "exporters.kafka.auth.tls")])
def test_invalid_blocks_name_the_yaml_keys(
    pki: ClientPki, tmp_path: Path, tls: str, message: str, shape: object, path: str
) -> None:
    other = make_client_pki(tmp_path, prefix="other-")

    def flow(p: Path) -> str:  # PEM as a YAML flow scalar: single-quoted, newlines kept as \n in a double quote
        return p.read_text().replace("\n", "\\n")

    text = (tls.replace("'{ca_text}'", f'"{flow(pki.ca)}"').replace("'{cert_text}'", f'"{flow(pki.client_cert)}"')
            .replace("'{key_text}'", f'"{flow(pki.client_key)}"')
            .replace("'{other_key_text}'", f'"{flow(other.client_key)}"')
            .replace("{ca}", str(pki.ca)).replace("{cert}", str(pki.client_cert)).replace("{key}", str(pki.client_key)))
    assert callable(shape)
    found = problems(shape(text))
    assert any(p == path and message in m for p, m in found), found


@pytest.mark.parametrize("key", ["ca_file", "cert_file", "key_file"])
def test_an_unreadable_file_is_named_by_its_key(pki: ClientPki, key: str) -> None:
    files = {"ca_file": str(pki.ca), "cert_file": str(pki.client_cert), "key_file": str(pki.client_key),
             key: "/nonexistent/file.pem"}
    tls = "{ " + ", ".join(f"{k}: '{v}'" for k, v in files.items()) + " }"
    found = problems(otlp(tls))
    assert (f"exporters.otlp.tls.{key}", "Value error, cannot read '/nonexistent/file.pem': No such file or directory"
            ) in found, found


@pytest.mark.parametrize(
    ("tls", "key"),
    [("{ insecure_skip_verify: true }", "tls.insecure_skip_verify"),
     ("{ min_version: '1.3' }", "tls.min_version")],
)
def test_grpc_refuses_what_its_channel_credentials_cannot_do(pki: ClientPki, tls: str, key: str) -> None:
    found = problems(otlp(tls.replace("{ca}", str(pki.ca)), protocol="grpc"))
    assert any(p == "exporters.otlp" and f"`{key}" in m and "not supported with protocol grpc" in m
               for p, m in found), found
    # the same block is fine over http/protobuf
    parse_config(otlp(tls.replace("{ca}", str(pki.ca))), environ={})


def test_a_plaintext_endpoint_names_the_tls_keys_it_cannot_use(pki: ClientPki) -> None:
    found = problems(f"exporters:\n  otlp: {{ endpoint: 'http://c:4317', tls: {{ server_name_override: x, "
                     f"ca_file: '{pki.ca}' }} }}\n")
    assert any(p == "exporters.otlp" and "drop `tls.ca_file`, `tls.server_name_override` or use https://" in m
               for p, m in found), found


def test_a_complete_block_loads_with_files_or_inline_pem(pki: ClientPki) -> None:
    by_file = ClientTLSConfig.model_validate({
        "ca_file": str(pki.ca), "cert_file": str(pki.client_cert), "key_file": str(pki.client_key),
        "server_name_override": "collector.internal", "min_version": "1.3", "reload_interval": "30s"})
    assert by_file.files() == (str(pki.ca), str(pki.client_cert), str(pki.client_key))
    inline = ClientTLSConfig.model_validate({
        "ca_pem": pki.ca.read_text(), "cert_pem": pki.client_cert.read_text(), "key_pem": pki.client_key.read_text()})
    assert inline.files() == ()
    assert inline.read_pem() == (pki.ca.read_bytes(), pki.client_cert.read_bytes(), pki.client_key.read_bytes())
    context = build_client_context(by_file)
    assert context.minimum_version is ssl.TLSVersion.TLSv1_3
    assert [c["subject"] for c in context.get_ca_certs()] == [c["subject"] for c in
                                                              build_client_context(inline).get_ca_certs()]
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    skip = build_client_context(ClientTLSConfig(insecure_skip_verify=True))
    assert (skip.verify_mode, skip.check_hostname) == (ssl.CERT_NONE, False)


def test_insecure_alone_is_plaintext_for_kafka() -> None:
    from evald.receivers.kafka_config import KafkaReceiverConfig, consumer_options

    options = consumer_options(KafkaReceiverConfig.model_validate({"auth": {"tls": {"insecure": True}}}))
    assert options["security_protocol"] == "PLAINTEXT" and "ssl_context" not in options


def test_include_system_ca_certs_pool_adds_the_system_store_to_the_ca(pki: ClientPki) -> None:
    system = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    system.load_default_certs()
    only = ClientTLSConfig(ca_file=str(pki.ca))
    both = ClientTLSConfig(ca_file=str(pki.ca), include_system_ca_certs_pool=True)
    assert len(build_client_context(only).get_ca_certs()) == 1
    assert len(build_client_context(both).get_ca_certs()) == 1 + len(system.get_ca_certs())
    ca, _, _ = both.read_pem()  # grpc's root_certificates: the private CA, then the system bundle
    assert ca is not None and ca.startswith(pki.ca.read_bytes()) and ca.count(b"BEGIN CERTIFICATE") == len(
        build_client_context(both).get_ca_certs())
    assert only.read_pem()[0] == pki.ca.read_bytes()
