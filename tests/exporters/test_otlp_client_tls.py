"""The otlp exporter's client ``tls`` block against a real collector behind TLS: evald -> TLS (a test terminator on
127.0.0.1 with a certificate naming only ``collector.internal``, tests/config/tls_terminator.py) -> rotel (OTLP gRPC
/ HTTP; its receivers serve plaintext only) -> a recording sink.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from evald.case import EvalCase, Score
from evald.exporters.otlp import OTLPExporter, OTLPExporterConfig
from evald.exporters.sending import DROP_REASONS
from evald.model import ScoredCase
from evald.telemetry import Telemetry
from tests.config.client_certs import ClientPki, make_client_pki
from tests.config.tls_terminator import server_context, terminator
from tests.exporters.otlp_sink import OTLPSink, Rotel

pytestmark = pytest.mark.integration

ID = "otlp/tls"


@pytest.fixture
def pki(tmp_path: Path) -> ClientPki:
    return make_client_pki(tmp_path / "pki")


def scored(n: int) -> list[ScoredCase]:
    case = EvalCase(input="q", output="a", trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7")
    return [ScoredCase(case=case, scores=tuple(Score(name=f"m{k}", value=0.5, threshold=0.5) for k in range(n)))]


def events(sink: OTLPSink) -> list[Any]:
    return [r for _, r in sink.log_records() if r.event_name == "gen_ai.evaluation.result"]


def make(port: int, protocol: str, tls: dict[str, Any], *, metrics: bool = False, retry_for: str = "1s"
         ) -> tuple[OTLPExporter, Telemetry]:
    telemetry = Telemetry()
    config = OTLPExporterConfig.model_validate({
        "endpoint": f"https://127.0.0.1:{port}", "protocol": protocol, "tls": tls, "metrics": metrics,
        "timeout": "1s", "export_interval": "60s",
        "retry_on_failure": {"initial_interval": "100ms", "max_interval": "200ms", "max_elapsed_time": retry_for},
    })
    return OTLPExporter(config, telemetry, component_id=ID), telemetry


async def send(port: int, protocol: str, tls: dict[str, Any], *, metrics: bool = False) -> Telemetry:
    """Export 3 scores through a fresh exporter to ``https://127.0.0.1:<port>`` and shut it down."""
    exporter, telemetry = make(port, protocol, tls, metrics=metrics)
    await exporter.start()
    await exporter.export(scored(3))
    await exporter.shutdown(4.0)
    return telemetry


def sent(telemetry: Telemetry) -> float:
    return telemetry.registry.get_sample_value("evald_exporter_sent_scores_total", {"exporter": ID}) or 0.0


def dropped(telemetry: Telemetry) -> float:
    return sum(telemetry.registry.get_sample_value("evald_exporter_dropped_scores_total",
                                                   {"exporter": ID, "reason": r}) or 0.0 for r in DROP_REASONS)


@pytest.mark.parametrize(("protocol", "upstream"), [("grpc", "grpc_port"), ("http/protobuf", "http_port")])
async def test_server_name_override_accepts_a_certificate_for_another_name(
    pki: ClientPki, sink: OTLPSink, collector: Rotel, protocol: str, upstream: str
) -> None:
    async with terminator(server_context(pki), getattr(collector, upstream)) as front:
        telemetry = await send(front.port, protocol, {"ca_file": str(pki.ca), "server_name_override": pki.host},
                               metrics=True)
        await sink.wait_for(lambda: len(events(sink)) == 3 and bool(sink.latest_points("evald.evaluation.count")))
    assert sent(telemetry) == 3 and dropped(telemetry) == 0
    assert front.requests >= 1


@pytest.mark.parametrize(("protocol", "upstream"), [("grpc", "grpc_port"), ("http/protobuf", "http_port")])
async def test_without_the_override_the_certificate_is_refused(
    pki: ClientPki, sink: OTLPSink, collector: Rotel, protocol: str, upstream: str
) -> None:
    async with terminator(server_context(pki), getattr(collector, upstream)) as front:
        telemetry = await send(front.port, protocol, {"ca_file": str(pki.ca)})
    assert front.hellos >= 1 and front.requests == 0  # the client refused the name on every connection
    assert events(sink) == [] and sent(telemetry) == 0 and dropped(telemetry) == 3


async def test_inline_pem_mtls_over_grpc(pki: ClientPki, sink: OTLPSink, collector: Rotel) -> None:
    tls = {"ca_pem": pki.ca.read_text(), "cert_pem": pki.client_cert.read_text(),
           "key_pem": pki.client_key.read_text(), "server_name_override": pki.host}
    async with terminator(server_context(pki, require_client_cert=True), collector.grpc_port) as front:
        telemetry = await send(front.port, "grpc", tls)
        await sink.wait_for(lambda: len(events(sink)) == 3)
    assert sent(telemetry) == 3 and front.requests >= 1


async def test_a_private_ca_with_the_system_pool_over_grpc(pki: ClientPki, sink: OTLPSink, collector: Rotel) -> None:
    """``include_system_ca_certs_pool``: grpc gets the private CA followed by the system bundle as its roots."""
    tls = {"ca_file": str(pki.ca), "include_system_ca_certs_pool": True, "server_name_override": pki.host}
    async with terminator(server_context(pki), collector.grpc_port) as front:
        telemetry = await send(front.port, "grpc", tls)
        await sink.wait_for(lambda: len(events(sink)) == 3)
    assert sent(telemetry) == 3 and front.requests >= 1


async def test_inline_pem_mtls_over_http(pki: ClientPki, sink: OTLPSink, collector: Rotel) -> None:
    tls = {"ca_pem": pki.ca.read_text(), "cert_pem": pki.client_cert.read_text(),
           "key_pem": pki.client_key.read_text(), "server_name_override": pki.host, "min_version": "1.3"}
    async with terminator(server_context(pki, require_client_cert=True), collector.http_port) as front:
        telemetry = await send(front.port, "http/protobuf", tls)
        await sink.wait_for(lambda: len(events(sink)) == 3)
    assert sent(telemetry) == 3 and front.requests >= 1


async def test_insecure_skip_verify_over_http(pki: ClientPki, sink: OTLPSink, collector: Rotel) -> None:
    async with terminator(server_context(pki), collector.http_port) as front:
        telemetry = await send(front.port, "http/protobuf", {"insecure_skip_verify": True})
        await sink.wait_for(lambda: len(events(sink)) == 3)
    assert sent(telemetry) == 3


async def test_the_system_store_does_not_trust_a_private_ca(pki: ClientPki, sink: OTLPSink, collector: Rotel) -> None:
    """No ``ca_file``: the system's trust store decides (as the Collector), not ``OTEL_EXPORTER_OTLP_CERTIFICATE``."""
    async with terminator(server_context(pki), collector.http_port) as front:
        telemetry = await send(front.port, "http/protobuf", {"server_name_override": pki.host})
    assert front.hellos >= 1 and front.handshakes == front.requests == 0  # refused during the handshake
    assert sent(telemetry) == 0 and events(sink) == []


@pytest.mark.parametrize(("protocol", "upstream", "logged"), [
    ("grpc", "grpc_port", "reconnecting with them"),
    ("http/protobuf", "http_port", "TLS client certificate/CA reloaded"),
])
async def test_reload_interval_follows_a_rotated_server_ca(
    tmp_path: Path, sink: OTLPSink, collector: Rotel, caplog: pytest.LogCaptureFixture, protocol: str, upstream: str,
    logged: str,
) -> None:
    old, new = make_client_pki(tmp_path / "old"), make_client_pki(tmp_path / "new")
    ca = tmp_path / "ca.crt"
    ca.write_bytes(old.ca.read_bytes())
    tls = {"ca_file": str(ca), "server_name_override": old.host, "reload_interval": "200ms"}
    async with terminator(server_context(old), getattr(collector, upstream)) as front:
        exporter, telemetry = make(front.port, protocol, tls, metrics=True, retry_for="15s")
        await exporter.start()
        try:
            await exporter.export(scored(3))
            await sink.wait_for(lambda: len(events(sink)) == 3)
            front.rotate(new)  # the server moves to a certificate from a new CA, as cert-manager would
            tmp = ca.with_suffix(".new")
            tmp.write_bytes(new.ca.read_bytes())
            os.replace(tmp, ca)  # and the client's CA file follows (a Secret volume's atomic swap)
            with caplog.at_level(logging.INFO):
                await exporter.export(scored(3))
                await sink.wait_for(lambda: len(events(sink)) == 6)
        finally:
            await exporter.shutdown(5.0)
    assert sent(telemetry) == 6 and dropped(telemetry) == 0
    assert logged in caplog.text
