"""Corpus traces with fresh trace ids, as OTLP requests (one trace per request), for exporter delivery tests."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.receivers.kafka.support import corpus_records, scored_trace_ids


def renumbered(n: int, tag: int = 0xE0A1D) -> list[tuple[str, bytes]]:
    """``n`` (trace id hex, serialized ExportTraceServiceRequest): the corpus's scorable traces in turn, each with a
    fresh trace id built from ``tag`` and its index."""
    scorable = [(tid, body) for tid, body in corpus_records() if tid in scored_trace_ids()]
    out: list[tuple[str, bytes]] = []
    for i in range(n):
        request = ExportTraceServiceRequest.FromString(scorable[i % len(scorable)][1])
        trace_id = bytes.fromhex(f"{tag << 100 | i + 1:032x}")
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    span.trace_id = trace_id
        out.append((trace_id.hex(), request.SerializeToString()))
    return out
