"""RefusalHold: a refusal is repeated before decoding only while the window has not shrunk, and never past its time."""

from __future__ import annotations

import asyncio

import pytest

from evald.errors import QueueFullError
from evald.model import ConsumeResult, SignalBatch
from evald.receivers.ingest import Ingestor
from evald.telemetry import Telemetry
from tests.receivers.support import trace_request


class SizedConsumer:
    """Refuses while ``full``; ``size`` plays the window's len (traces held)."""

    def __init__(self) -> None:
        self.size = 1000
        self.full = True
        self.calls = 0

    def __len__(self) -> int:
        return self.size

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.calls += 1
        if self.full:
            raise QueueFullError("assembly window is full (1000 of 1000 traces)", retry_after=1.0)
        return ConsumeResult()


async def test_a_trace_leaving_the_window_ends_the_hold_at_once() -> None:
    consumer = SizedConsumer()
    ingestor = Ingestor("otlp", "grpc", consumer, Telemetry())
    body = trace_request(2).SerializeToString()
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    consumer.size = 1001  # something else got in: still full
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    assert consumer.calls == 1
    consumer.size, consumer.full = 999, False  # a trace was released: room, well within the 0.1 s hold
    assert await ingestor.ingest_body(body, "protobuf", "traces") == (0, "")
    assert consumer.calls == 2


async def test_without_a_size_the_hold_ends_with_its_time() -> None:
    consumer = SizedConsumer()
    ingestor = Ingestor("otlp", "grpc", _Unsized(consumer), Telemetry())
    body = trace_request(1).SerializeToString()
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    consumer.full = False
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    await asyncio.sleep(0.1)
    assert await ingestor.ingest_body(body, "protobuf", "traces") == (0, "")
    assert consumer.calls == 2


class _Unsized:
    def __init__(self, inner: SizedConsumer) -> None:
        self.inner = inner

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        return self.inner.consume(batch)
