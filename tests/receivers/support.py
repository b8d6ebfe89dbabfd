"""Shared test doubles and builders for the receiver tests."""

from __future__ import annotations

import os
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from prometheus_client import CollectorRegistry

from evald.model import ConsumeResult, LogRecord, SignalBatch, SpanRecord

TRACE_ID = bytes.fromhex("5b8efff798038103d269b633813fc60c")
SPAN_ID = bytes.fromhex("eee19b7ec3c1b174")


class RecordingConsumer:
    """A ``TraceConsumer`` that records batches; ``errors`` are raised first, one per call."""

    def __init__(self, *errors: BaseException, result: ConsumeResult | None = None) -> None:
        self.errors = list(errors)
        self.result = result or ConsumeResult()
        self.batches: list[SignalBatch] = []
        self.calls = 0

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        self.batches.append(batch)
        return self.result

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        return [batch]  # no size bound

    @property
    def spans(self) -> list[SpanRecord]:
        return [s for b in self.batches for s in b.spans]

    @property
    def logs(self) -> list[LogRecord]:
        return [rec for b in self.batches for rec in b.logs]


def value(py: Any) -> AnyValue:
    """Plain Python -> AnyValue (the inverse of convert.any_value)."""
    out = AnyValue()
    if py is None:
        pass
    elif isinstance(py, bool):
        out.bool_value = py
    elif isinstance(py, int):
        out.int_value = py
    elif isinstance(py, float):
        out.double_value = py
    elif isinstance(py, str):
        out.string_value = py
    elif isinstance(py, bytes):
        out.bytes_value = py
    elif isinstance(py, list):
        out.array_value.SetInParent()
        out.array_value.values.extend(value(v) for v in py)
    elif isinstance(py, dict):
        out.kvlist_value.SetInParent()
        for k, v in py.items():
            out.kvlist_value.values.add(key=k).value.CopyFrom(value(v))
    else:
        raise TypeError(py)
    return out


def trace_request(
    n: int = 1,
    *,
    trace_id: bytes = TRACE_ID,
    attributes: dict[str, Any] | None = None,
    service: str = "svc",
    random_ids: bool = False,
) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = service
    ss = rs.scope_spans.add()
    ss.scope.name = "test.scope"
    ss.scope.version = "1.2.3"
    for i in range(n):
        span = ss.spans.add(
            trace_id=os.urandom(16) if random_ids else trace_id,
            span_id=os.urandom(8) if random_ids else (i + 1).to_bytes(8, "big"),
            name=f"span-{i}",
            kind=Span.SPAN_KIND_CLIENT,
            start_time_unix_nano=1_700_000_000_000_000_000,
            end_time_unix_nano=1_700_000_000_100_000_000,
        )
        for key, v in (attributes or {}).items():
            span.attributes.add(key=key).value.CopyFrom(value(v))
    return req


def logs_request(n: int = 1, *, trace_id: bytes = TRACE_ID, span_id: bytes = SPAN_ID) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.add(key="service.name").value.string_value = "svc"
    sl = rl.scope_logs.add()
    sl.scope.name = "logs.scope"
    for i in range(n):
        rec = sl.log_records.add(trace_id=trace_id, span_id=span_id, time_unix_nano=1_700_000_000_000_000_000 + i)
        rec.event_name = "gen_ai.client.inference.operation.details"
        rec.body.string_value = f"body-{i}"
    return req


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0
