"""Many distinct traces for judge load tests and the benchmarks: the GenAI-semconv corpus traces replicated with
fresh trace and span ids (``renumbered``), converted to ``SignalBatch``es as a receiver would hand them to the
window (``replicated_batches``)."""

from __future__ import annotations

import functools
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evald.model import SignalBatch
from evald.receivers.convert import convert_traces

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"
#: chat (correct, wrong, streaming), tool call, RAG, PII and a failed call (no output: judges not applicable)
SCENARIOS = ("a_chat_correct", "b_chat_wrong", "c_tool_call", "d_rag", "e_pii", "f_error", "h_streaming_chat")


@functools.lru_cache(maxsize=8)
def templates(scenarios: tuple[str, ...] = SCENARIOS) -> tuple[trace_service_pb2.ExportTraceServiceRequest, ...]:
    """The scenarios' corpus requests, read once (the judge benchmark's feeder asks again for every batch);
    never modified: ``renumbered`` copies."""
    return tuple(trace_service_pb2.ExportTraceServiceRequest.FromString((CORPUS / f"{name}.pb").read_bytes())
                 for name in scenarios)


def renumbered(template: trace_service_pb2.ExportTraceServiceRequest, counter: int
               ) -> trace_service_pb2.ExportTraceServiceRequest:
    """A copy of ``template`` as trace ``counter``: that trace id, span and parent ids XORed with ``counter``."""
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.CopyFrom(template)
    trace_id = counter.to_bytes(16, "big")
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                span.trace_id = trace_id
                span.span_id = (int.from_bytes(span.span_id, "big") ^ counter).to_bytes(8, "big")
                if span.parent_span_id:
                    span.parent_span_id = (int.from_bytes(span.parent_span_id, "big") ^ counter).to_bytes(8, "big")
    return request


def replicated_batches(
    traces: int, per_batch: int = 50, first: int = 1, scenarios: tuple[str, ...] = SCENARIOS
) -> list[SignalBatch]:
    """``traces`` traces (trace ids ``first``, ``first + 1``...), cycling through the scenarios."""
    sources = templates(scenarios)
    batches: list[SignalBatch] = []
    for start in range(first, first + traces, per_batch):
        request = trace_service_pb2.ExportTraceServiceRequest()
        for counter in range(start, min(start + per_batch, first + traces)):
            request.resource_spans.extend(renumbered(sources[counter % len(sources)], counter).resource_spans)
        batches.append(SignalBatch(spans=tuple(convert_traces(request).records), source="test"))
    return batches


def trace_id_hex(counter: int) -> str:
    return counter.to_bytes(16, "big").hex()
