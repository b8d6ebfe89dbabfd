"""Send one GenAI trace to evald (or to a Collector) with the OpenTelemetry Python SDK.

    pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    python docs/examples/send_trace.py                          # to http://localhost:4318 (evald or a Collector)
    python docs/examples/send_trace.py http://collector:4318    # elsewhere

The trace is what a GenAI instrumentation records: an agent span with one `chat` child span carrying the model,
token usage and the messages (OpenTelemetry GenAI semantic conventions). docs/getting-started.md uses it;
tests/docs/test_getting_started.py runs it against an in-process evald.
"""

from __future__ import annotations

import json
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

QUESTION = "What is the capital of France?"
ANSWER = "The capital of France is Paris."


def send_trace(endpoint: str = "http://localhost:4318", service_name: str = "geo-agent") -> str:
    """Export one agent trace over OTLP/HTTP to ``endpoint``; returns its trace id (32 hex digits)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=10)))
    tracer = provider.get_tracer("getting-started")
    with tracer.start_as_current_span("invoke_agent geo-agent") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "geo-agent")
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.response.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", 14)
            chat.set_attribute("gen_ai.usage.output_tokens", 8)
            chat.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]))
            chat.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}]))
        trace_id = format(agent.get_span_context().trace_id, "032x")
    provider.shutdown()  # flushes: the spans are sent before this returns
    return trace_id


if __name__ == "__main__":
    print(send_trace(*sys.argv[1:2]))
