"""Capture real MCP traces from the official ``mcp`` Python SDK's OpenTelemetry instrumentation (mcp >= 2.3: a
CLIENT span ``MCP send <method> [<tool>]`` per request from the JSON-RPC dispatcher, a SERVER span
``<method> [<tool>]`` per inbound message from ``OpenTelemetryMiddleware``, trace context propagated in
``params._meta``), around a GenAI agent trace whose inference spans are written by hand with the OTel SDK (the
model is not called: the spans say what a chat model requested and answered).

Run in a venv with the SDK (not an evald dependency):

    python3 -m venv /tmp/cap && /tmp/cap/bin/pip install mcp==2.3.0 opentelemetry-sdk==1.45.2 \\
        opentelemetry-exporter-otlp-proto-common==1.45.2
    /tmp/cap/bin/python tests/testdata/mcp/capture.py tests/testdata/mcp          # inproc.pb
    /tmp/cap/bin/python tests/testdata/mcp/capture.py tests/testdata/mcp stdio    # stdio.pb

Writes, as OTLP protobuf (``ExportTraceServiceRequest``, encoded by the SDK's own OTLP encoder):

- ``inproc.pb``: client and server in one process (``Client(server, mode="legacy")``: the in-memory transport
  through the JSON-RPC dispatcher), two tool calls (``get_weather`` ok, ``get_forecast`` failing with an error
  result) between two chat spans;
- ``stdio.pb``: the server as a real subprocess over stdio (``StdioServerParameters``); its spans are exported by
  the subprocess to a file and joined to the client's by the trace context the SDK propagated.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SERVER_SPANS_ENV = "MCP_CAPTURE_SERVER_SPANS"


def build_server():  # type: ignore[no-untyped-def]
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("weather")

    @server.tool()
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return f"18C and sunny in {city}"

    @server.tool()
    def get_forecast(city: str, days: int) -> str:
        """Forecast of a city."""
        raise ValueError(f"no forecast for {city} over {days} days")

    return server


def _chat(tracer: trace.Tracer, messages: list[dict[str, object]], output: list[dict[str, object]]) -> None:
    with tracer.start_as_current_span("chat gpt-4o-mini", kind=trace.SpanKind.CLIENT) as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.provider.name", "openai")
        span.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        span.set_attribute("gen_ai.response.model", "gpt-4o-mini")
        span.set_attribute("gen_ai.usage.input_tokens", 40)
        span.set_attribute("gen_ai.usage.output_tokens", 12)
        span.set_attribute("gen_ai.input.messages", json.dumps(messages))
        span.set_attribute("gen_ai.output.messages", json.dumps(output))


async def agent_run(client_factory, tracer: trace.Tracer) -> None:  # type: ignore[no-untyped-def]
    question = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris, and the 3-day forecast?"}]}]
    requested = [
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
        {"type": "tool_call", "id": "call_2", "name": "get_forecast", "arguments": {"city": "Paris", "days": 3}},
    ]
    with tracer.start_as_current_span("invoke_agent weather-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "weather-agent")
        _chat(tracer, question, [{"role": "assistant", "parts": requested, "finish_reason": "tool_calls"}])
        async with client_factory() as client:
            weather = await client.call_tool("get_weather", {"city": "Paris"})
            forecast = await client.call_tool("get_forecast", {"city": "Paris", "days": 3})
        responses = [{"type": "tool_call_response", "id": "call_1", "response": weather.content[0].text},
                     {"type": "tool_call_response", "id": "call_2", "response": forecast.content[0].text}]
        answer = "It is 18C and sunny in Paris; the forecast is not available."
        _chat(tracer, [*question, {"role": "assistant", "parts": requested}, {"role": "tool", "parts": responses}],
              [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}])


def _provider(service: str) -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def _write(path: Path, spans: list[ReadableSpan]) -> None:
    path.write_bytes(encode_spans(spans).SerializeToString())
    print(f"{path}: {len(spans)} spans: " + ", ".join(sorted({s.name for s in spans})))


async def capture_inproc(out: Path) -> None:
    from mcp import Client

    provider, memory = _provider("weather-agent")
    trace.set_tracer_provider(provider)  # the SDK's module tracer is a proxy: it follows the global provider
    server = build_server()
    await agent_run(lambda: Client(server, mode="legacy"), provider.get_tracer("capture"))
    _write(out / "inproc.pb", list(memory.get_finished_spans()))


async def capture_stdio(server_spans: Path) -> list[ReadableSpan]:
    from mcp import Client, StdioServerParameters

    provider, memory = _provider("weather-agent")
    trace.set_tracer_provider(provider)
    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve"],
                                   env={**os.environ, SERVER_SPANS_ENV: str(server_spans)})
    await agent_run(lambda: Client(params), provider.get_tracer("capture"))
    return list(memory.get_finished_spans())


def join_server_spans(out: Path, client_spans: list[ReadableSpan], server_spans: Path) -> None:
    """The client's spans and the server subprocess's (written when it exited) in one request: ``stdio.pb``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = encode_spans(client_spans)
    for _ in range(50):
        if server_spans.exists():
            break
        time.sleep(0.1)
    request.resource_spans.extend(ExportTraceServiceRequest.FromString(server_spans.read_bytes()).resource_spans)
    (out / "stdio.pb").write_bytes(request.SerializeToString())
    server_spans.unlink()
    names = sorted({s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans})
    print(f"{out / 'stdio.pb'}: " + ", ".join(names))


def serve() -> None:
    """The stdio server subprocess: exports its own spans to a file at exit."""
    provider, memory = _provider("weather-mcp-server")
    trace.set_tracer_provider(provider)
    try:
        build_server().run("stdio")
    finally:
        Path(os.environ[SERVER_SPANS_ENV]).write_bytes(encode_spans(list(memory.get_finished_spans()))
                                                       .SerializeToString())


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
        return
    out = Path(sys.argv[1])
    if sys.argv[2:] == ["stdio"]:
        server_spans = out / "server-spans.tmp"
        join_server_spans(out, asyncio.run(capture_stdio(server_spans)), server_spans)
    else:
        asyncio.run(capture_inproc(out))


if __name__ == "__main__":
    main()
