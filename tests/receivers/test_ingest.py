"""Ingestor: refusal before decoding while the consumer refuses; internal errors counted once."""

from __future__ import annotations

import asyncio
import json

import pytest

from evald.errors import QueueFullError
from evald.receivers.ingest import Ingestor, InternalError, MalformedRequest
from evald.receivers.refusal_hold import REFUSAL_HOLD
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, logs_request, sample, trace_request


def _metric(telemetry: Telemetry, name: str, **labels: str) -> float:
    return sample(telemetry.registry, name, receiver="otlp", transport="http", **labels)


async def test_while_the_consumer_refuses_requests_are_refused_before_decoding_then_decoded_again() -> None:
    telemetry = Telemetry()
    consumer = RecordingConsumer(QueueFullError("assembly window is full", retry_after=2.0))
    ingestor = Ingestor("otlp", "http", consumer, telemetry)
    body = trace_request(3).SerializeToString()
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    assert consumer.calls == 1
    for encoding, payload in (("protobuf", body), ("json", b'{"resourceSpans": []}')):
        with pytest.raises(QueueFullError) as refused:
            await ingestor.ingest_body(payload, encoding, "traces")  # type: ignore[arg-type]
        assert str(refused.value) == "assembly window is full" and refused.value.retry_after == 2.0
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(logs_request(2).SerializeToString(), "protobuf", "logs")
    with pytest.raises(MalformedRequest):  # still parsed (to count its items): garbage is still a 400
        await ingestor.ingest_body(b"\x0a\xff\xff", "protobuf", "traces")
    assert consumer.calls == 1  # none of them reached the consumer
    assert _metric(telemetry, "evald_receiver_requests_total", outcome="queue_full") == 4
    # protobuf items counted exactly (3 + 3 spans, 2 log records); the JSON request was not parsed
    assert _metric(telemetry, "evald_receiver_refused_spans_total", reason="queue_full") == 6
    assert _metric(telemetry, "evald_receiver_refused_log_records_total", reason="queue_full") == 2
    await asyncio.sleep(REFUSAL_HOLD)
    assert await ingestor.ingest_body(body, "protobuf", "traces") == (0, "")
    assert await ingestor.ingest_body(json.dumps({"resourceSpans": []}).encode(), "json", "traces") == (0, "")
    assert consumer.calls == 2 and len(consumer.spans) == 3


async def test_the_hold_is_never_longer_than_the_retry_hint() -> None:
    consumer = RecordingConsumer(QueueFullError("full", retry_after=0.01))
    ingestor = Ingestor("otlp", "http", consumer, Telemetry())
    body = trace_request(1).SerializeToString()
    with pytest.raises(QueueFullError):
        await ingestor.ingest_body(body, "protobuf", "traces")
    await asyncio.sleep(0.02)
    assert await ingestor.ingest_body(body, "protobuf", "traces") == (0, "")


async def test_an_unexpected_consumer_error_is_counted_once_as_internal_error() -> None:
    telemetry = Telemetry()
    ingestor = Ingestor("otlp", "http", RecordingConsumer(KeyError("bug")), telemetry)
    with pytest.raises(InternalError) as raised:
        await ingestor.ingest_body(trace_request(2).SerializeToString(), "protobuf", "traces")
    assert raised.value.kind == "KeyError" and isinstance(raised.value.__cause__, KeyError)
    assert _metric(telemetry, "evald_receiver_requests_total", outcome="internal_error") == 1
    assert _metric(telemetry, "evald_receiver_refused_spans_total", reason="internal_error") == 2
