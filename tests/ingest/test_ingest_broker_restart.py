"""The ingest role across a broker restart: tansu on S3 storage (moto) is killed under a running ingest service and
started again on the same port and storage. While it is down OTLP clients get UNAVAILABLE / 503 (retryable); once it
is back the same client retry succeeds without restarting evald, and every record that was acknowledged, before the
crash or after the restart, is in the topic."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import grpc
import httpx
import pytest

from evald.config.loader import parse_config
from evald.ingest.roles import IngestService
from evald.receivers.otlp_grpc import TRACE_SERVICE
from tests.ingest.support import read_topic, wait_until
from tests.ingest.test_roles import config_text, ports
from tests.receivers.kafka.broker import restartable_tansu
from tests.receivers.kafka.support import create_topic
from tests.receivers.support import sample, trace_request

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

HEADERS = {"Content-Type": "application/x-protobuf"}


async def post_until_accepted(client: httpx.AsyncClient, url: str, body: bytes, timeout: float = 30.0) -> int:
    """What an OTLP/HTTP exporter does: retry on 503 after ``Retry-After``; returns the number of 503 answers."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    refused = 0
    while (answer := await client.post(url, content=body, headers=HEADERS)).status_code == 503:
        refused += 1
        assert loop.time() < deadline, f"still 503 after {timeout}s"
        await asyncio.sleep(float(answer.headers["Retry-After"]))
    assert answer.status_code == 200, answer.text
    return refused


async def export_until_accepted(port: int, body: bytes, timeout: float = 30.0) -> int:
    """What an OTLP/gRPC exporter does: retry on UNAVAILABLE; returns the number of UNAVAILABLE answers."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    refused = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        export = channel.unary_unary(f"/{TRACE_SERVICE}/Export")
        while True:
            try:
                await export(body, timeout=10)
                return refused
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.UNAVAILABLE, err
                refused += 1
                assert loop.time() < deadline, f"still UNAVAILABLE after {timeout}s"
                await asyncio.sleep(0.5)


def request(trace_id: bytes) -> bytes:
    return trace_request(2, trace_id=trace_id).SerializeToString()  # one trace of 2 spans: one record


async def test_clients_retry_through_a_broker_restart_and_nothing_acknowledged_is_lost(tmp_path: Path) -> None:
    topic = f"otlp_spans_{uuid.uuid4().hex[:8]}"
    before, during_http, during_grpc = (os.urandom(16) for _ in range(3))
    with restartable_tansu(tmp_path) as broker:
        await create_topic(broker.bootstrap, topic, 1)
        ingest = IngestService(parse_config(config_text(broker.bootstrap, topic, "1s")), with_admin=False)
        await ingest.start()
        try:
            await wait_until(lambda: ingest.forwarder.connected)
            grpc_port, http_port = ports(ingest)
            url = f"http://127.0.0.1:{http_port}/v1/traces"
            reg = ingest.telemetry.registry
            async with httpx.AsyncClient(timeout=10) as client:
                assert (await client.post(url, content=request(before), headers=HEADERS)).status_code == 200
                broker.kill()  # acknowledged just before: it must survive the crash (persistent storage)

                down = await client.post(url, content=request(during_http), headers=HEADERS)
                assert down.status_code == 503 and down.headers["Retry-After"] == "1"
                async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await channel.unary_unary(f"/{TRACE_SERVICE}/Export")(request(during_grpc), timeout=10)
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
                assert sample(reg, "evald_ingest_records_total", topic=topic, outcome="failed") == 2

                await asyncio.to_thread(broker.start)  # same port and storage; evald is not restarted
                await post_until_accepted(client, url, request(during_http))  # the clients' own retries
            await export_until_accepted(grpc_port, request(during_grpc))
            acked = sample(reg, "evald_ingest_records_total", topic=topic, outcome="acked")
            assert acked == 3 and ingest.forwarder.in_flight == 0
            assert ingest.telemetry.health.components["ingest:kafka"] is True
            for transport in ("http", "grpc"):
                assert sample(reg, "evald_receiver_requests_total", receiver="otlp", transport=transport,
                              outcome="success") >= 1
        finally:
            await ingest.shutdown()
        expected = {t.hex() for t in (before, during_http, during_grpc)}
        keys: set[str] = set()
        for count in range(3, 7):  # a duplicate (a send that reached the broker after its timeout) comes on top
            keys = {key for key, _ in await read_topic(broker.bootstrap, topic, count)}
            if keys >= expected:
                break
    assert keys == expected
