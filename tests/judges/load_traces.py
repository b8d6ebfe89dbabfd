"""Many distinct traces for judge load tests and the judge benchmark: the GenAI-semconv corpus traces replicated
with fresh trace and span ids, converted to ``SignalBatch``es as a receiver would hand them to the window."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evald.model import SignalBatch
from evald.receivers.convert import convert_traces

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"
#: chat (correct, wrong, streaming), tool call, RAG, PII and a failed call (no output: judges not applicable)
SCENARIOS = ("a_chat_correct", "b_chat_wrong", "c_tool_call", "d_rag", "e_pii", "f_error", "h_streaming_chat")


def _templates(scenarios: tuple[str, ...]) -> list[trace_service_pb2.ExportTraceServiceRequest]:
    out = []
    for name in scenarios:
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString((CORPUS / f"{name}.pb").read_bytes())
        out.append(request)
    return out


def replicated_batches(
    traces: int, per_batch: int = 50, first: int = 1, scenarios: tuple[str, ...] = SCENARIOS
) -> list[SignalBatch]:
    """``traces`` traces (trace ids ``first``, ``first + 1``...), cycling through the scenarios."""
    templates = _templates(scenarios)
    batches: list[SignalBatch] = []
    for start in range(first, first + traces, per_batch):
        request = trace_service_pb2.ExportTraceServiceRequest()
        for counter in range(start, min(start + per_batch, first + traces)):
            trace_id = counter.to_bytes(16, "big")
            for rs in templates[counter % len(templates)].resource_spans:
                new_rs = request.resource_spans.add()
                new_rs.CopyFrom(rs)
                for ss in new_rs.scope_spans:
                    for span in ss.spans:
                        span.trace_id = trace_id
                        span.span_id = (int.from_bytes(span.span_id, "big") ^ counter).to_bytes(8, "big")
                        if span.parent_span_id:
                            parent = int.from_bytes(span.parent_span_id, "big") ^ counter
                            span.parent_span_id = parent.to_bytes(8, "big")
        batches.append(SignalBatch(spans=tuple(convert_traces(request).records), source="test"))
    return batches


def trace_id_hex(counter: int) -> str:
    return counter.to_bytes(16, "big").hex()
