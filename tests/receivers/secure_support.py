"""Shared by test_otlp_tls.py and test_otlp_auth.py: start secured receivers, make SDK spans, read counters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evald.receivers.otlp import OTLPGrpcConfig, OTLPHttpConfig
from evald.receivers.otlp_grpc import OTLPGrpcReceiver
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer, sample

#: Deadline of one export attempt chain for exporters expected to fail (they retry transient errors until then).
FAILING_EXPORT_TIMEOUT = 3.0


@dataclass
class Running:
    receiver: OTLPGrpcReceiver | OTLPHttpReceiver
    consumer: RecordingConsumer
    telemetry: Telemetry
    transport: str

    @property
    def port(self) -> int:
        assert self.receiver.bound_port is not None
        return self.receiver.bound_port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def metric(self, name: str, **labels: str) -> float:
        return sample(self.telemetry.registry, name, receiver="otlp", transport=self.transport, **labels)

    def unauthenticated(self, reason: str) -> float:
        return self.metric("evald_receiver_unauthenticated_requests_total", reason=reason)


@asynccontextmanager
async def running(transport: str, **config: Any) -> AsyncIterator[Running]:
    """A started receiver on 127.0.0.1 with ``config`` (``tls``/``auth`` blocks as plain dicts)."""
    telemetry = Telemetry()
    receiver: OTLPGrpcReceiver | OTLPHttpReceiver
    if transport == "grpc":
        receiver = OTLPGrpcReceiver(OTLPGrpcConfig.model_validate({"endpoint": "127.0.0.1:0", **config}), telemetry)
    else:
        receiver = OTLPHttpReceiver(OTLPHttpConfig.model_validate({"endpoint": "127.0.0.1:0", **config}), telemetry)
    consumer = RecordingConsumer()
    await receiver.start(consumer)
    try:
        yield Running(receiver, consumer, telemetry, transport)
    finally:
        await receiver.shutdown(1.0)


def sdk_spans(*names: str) -> list[ReadableSpan]:
    """Finished spans made by the OpenTelemetry SDK, ready for an exporter's ``export``."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("secure.test")
    for name in names:
        with tracer.start_as_current_span(name):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())
