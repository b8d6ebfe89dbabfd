"""A bounded sample of the receiver fuzz run (tests/benchmarks/fuzz_receivers.py): 400 mutated and malformed inputs
(fixed seed) against both receivers in process, each answered, none with 500 / INTERNAL, nothing logged at ERROR."""

from __future__ import annotations

import asyncio
import collections
import logging
import random
from collections.abc import AsyncIterator

import aiohttp
import grpc
import pytest

from evald.receivers.otlp import OTLPGrpcConfig, OTLPHttpConfig
from evald.receivers.otlp_grpc import OTLPGrpcReceiver
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.telemetry import Telemetry
from tests.receivers.fuzz_inputs import (
    GRPC_OK_CODES,
    HTTP_OK_STATUSES,
    Corpus,
    FuzzInput,
    generate,
    send_grpc,
    send_http,
)
from tests.receivers.support import RecordingConsumer, sample

pytestmark = pytest.mark.integration

INPUTS = 400
SEED = 20261126


class DiscardingConsumer(RecordingConsumer):
    """Counts what it is given without keeping it (thousands of spans would otherwise pile up)."""

    def __init__(self) -> None:
        super().__init__()
        self.spans_seen = 0

    def consume(self, batch):  # type: ignore[no-untyped-def]
        self.calls += 1
        self.spans_seen += len(batch.spans)
        return self.result


@pytest.fixture
async def receivers() -> AsyncIterator[tuple[OTLPHttpReceiver, OTLPGrpcReceiver, Telemetry, DiscardingConsumer]]:
    telemetry = Telemetry()
    consumer = DiscardingConsumer()
    http = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), telemetry)
    grpc_receiver = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint="127.0.0.1:0"), telemetry)
    await http.start(consumer)
    await grpc_receiver.start(consumer)
    try:
        yield http, grpc_receiver, telemetry, consumer
    finally:
        await http.shutdown(1.0)
        await grpc_receiver.shutdown(1.0)


async def test_a_sample_of_fuzz_inputs_is_answered_without_internal_errors(
    receivers: tuple[OTLPHttpReceiver, OTLPGrpcReceiver, Telemetry, DiscardingConsumer],
    caplog: pytest.LogCaptureFixture,
) -> None:
    http, grpc_receiver, telemetry, consumer = receivers
    rng = random.Random(SEED)
    corpus = Corpus()
    inputs = [generate(rng, corpus, oversize=False) for _ in range(INPUTS)]
    inputs.append(FuzzInput("oversize", "http", "traces", corpus.bomb,
                            {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}))
    answers: collections.Counter[tuple[str, str]] = collections.Counter()
    bad: list[tuple[str, str, bytes]] = []
    limit = asyncio.Semaphore(16)
    caplog.set_level(logging.WARNING)
    async with aiohttp.ClientSession() as session, grpc.aio.insecure_channel(
        f"127.0.0.1:{grpc_receiver.bound_port}") as channel:

        async def one(item: FuzzInput) -> None:
            async with limit:
                if item.transport == "grpc":
                    answer = await send_grpc(channel, item, timeout=20)
                    ok = answer in GRPC_OK_CODES
                else:
                    answer = await send_http(session, f"http://127.0.0.1:{http.bound_port}", item, timeout=20)
                    ok = answer.isdigit() and int(answer) in HTTP_OK_STATUSES
            answers[(item.transport, answer)] += 1
            if not ok:
                bad.append((item.kind, answer, item.body[:200]))

        await asyncio.gather(*(one(item) for item in inputs))
    assert not bad, bad[:5]
    assert sum(answers.values()) == len(inputs)
    assert {t for t, _ in answers} == {"http", "grpc"}
    # both kinds of outcome occur: refused input and input (partly) accepted
    assert answers[("http", "400")] > 0 and answers[("http", "200")] + answers[("grpc", "OK")] > 0
    assert consumer.spans_seen > 0
    assert sample(telemetry.registry, "evald_receiver_requests_total", receiver="otlp", transport="http",
                  outcome="internal_error") == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
