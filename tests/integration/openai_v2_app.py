"""A real app for the end-to-end tests: the ``openai`` SDK instrumented by ``opentelemetry-instrumentation-openai-v2``
in its defaults (no content capture), talking to a local OpenAI Chat Completions stand-in, exporting with the real
OTLP/HTTP span exporter. Run as a subprocess (the instrumentation patches the SDK process-wide):

    python -m tests.integration.openai_v2_app http://127.0.0.1:<evald-http-port> <service-name>

It makes one successful call and one call the stand-in answers with HTTP 500, flushes, and exits 0.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _ChatCompletions(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: a fixed answer with usage; a request whose user text says ``fail`` gets 500."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's handler name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        failing = "fail" in json.dumps(body.get("messages", []))
        if failing:
            payload: dict[str, Any] = {"error": {"message": "The server had an error", "type": "server_error"}}
            status = 500
        else:
            payload = {
                "id": "chatcmpl-e2e-1", "object": "chat.completion", "created": 1_764_000_000,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "The capital of France is Paris."}}],
                "usage": {"prompt_tokens": 26, "completion_tokens": 8, "total_tokens": 34},
            }
            status = 200
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


def main(endpoint: str, service: str) -> int:
    import openai
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    client = openai.OpenAI(api_key="sk-test", base_url=f"http://127.0.0.1:{server.server_port}/v1", max_retries=0)
    try:
        messages = [{"role": "system", "content": "You are a concise assistant."},
                    {"role": "user", "content": "What is the capital of France?"}]
        client.chat.completions.create(model="gpt-4o-mini", messages=messages)  # type: ignore[arg-type]
        with contextlib.suppress(openai.InternalServerError):
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "fail"}])
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
