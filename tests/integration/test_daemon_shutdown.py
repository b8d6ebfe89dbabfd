"""SIGTERM with a backlog (issue 16 item 7): `evald run` fed 20,000 traces by the real OTel SDK's OTLP gRPC exporter,
scoring them through a `webhook` metric whose local server answers after 0.5 s. Stopped mid-backlog, evald exits
within `pipeline.shutdown_timeout` (+ the documented margin) and accounts for every case: the totals line it logs
and the last /metrics scrape before it exited agree, and cases mapped = scored + dropped by reason + without metric,
with every accepted span either in a mapped trace or dropped by the window at shutdown."""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import value

pytestmark = pytest.mark.integration

TRACES = 20_000
SHUTDOWN_TIMEOUT = 3.0
MARGIN = 1.0  # docs/architecture.md, "Shutdown": cancelled workers' grace, closing, interpreter exit
WEBHOOK_DELAY = 0.5


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # evald opens up to 100 connections at once

    def handle_error(self, request: object, client_address: object) -> None:
        return None  # evald hanging up mid-answer at shutdown is expected


class _SlowScorer(BaseHTTPRequestHandler):
    """The webhook: reads the case, answers {"score": 1.0} after WEBHOOK_DELAY seconds."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(WEBHOOK_DELAY)
        body = json.dumps({"score": 1.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        return None


def _send(endpoint: str) -> None:
    """TRACES one-span chat traces through the SDK's batch processor and OTLP gRPC exporter."""
    provider = TracerProvider(resource=Resource.create({"service.name": "shutdown-test"}))
    provider.add_span_processor(BatchSpanProcessor(
        OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=30),
        max_queue_size=TRACES, max_export_batch_size=2000, schedule_delay_millis=50,
    ))
    tracer = provider.get_tracer("tests.shutdown")
    for i in range(TRACES):
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": f"question {i}"}]}]))
            chat.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "answer"}], "finish_reason": "stop"}]))
    assert provider.force_flush(60_000)
    provider.shutdown()


_TOTALS = re.compile(
    r"evald stopped after (?P<took>[\d.]+)s: cases (?P<cases>\d+) = scored (?P<scored>\d+) \+ dropped (?P<dropped>\d+)"
    r"(?: \((?P<reasons>[^)]*)\))? \+ sampled out (?P<sampled>\d+) \+ without metric (?P<none>\d+); "
    r"unaccounted (?P<lost>-?\d+); spans dropped by the assembly window at shutdown (?P<spans>\d+)"
)


def _scrape_until_gone(url: str, last: list[str], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            last.append(httpx.get(url, timeout=1).text)
        except httpx.HTTPError:
            if last:
                return  # the listener closed
        time.sleep(0.02)


def test_sigterm_with_a_backlog_accounts_for_every_case_and_exits_in_time(tmp_path: Path) -> None:
    scorer = _Server(("127.0.0.1", 0), _SlowScorer)
    serving = threading.Thread(target=scorer.serve_forever, daemon=True)
    serving.start()
    daemon = Daemon(tmp_path, f"""
assembly: {{ settle: 100ms, decision_wait: 5s }}
metrics:
  - {{ kind: error_free, scope: llm_call }}
  - kind: webhook
    scope: llm_call
    options: {{ url: "http://127.0.0.1:{scorer.server_port}/score", timeout: 20s }}
pipeline: {{ workers: 2, queue_size: 2000, metric_timeout: 30s, shutdown_timeout: {SHUTDOWN_TIMEOUT}s }}
""")
    try:
        daemon.start()
        _send(f"127.0.0.1:{daemon.grpc_port}")
        before = daemon.scrape()
        assert value(before, "evald_receiver_accepted_spans_total") == TRACES
        assert value(before, "evald_queue_size") > 0  # a backlog behind the slow webhook
        assert daemon.proc is not None
        last: list[str] = []
        stop = threading.Event()
        scraping = threading.Thread(target=_scrape_until_gone, args=(f"{daemon.metrics_url}/metrics", last, stop))
        scraping.start()
        time.sleep(0.1)
        began = time.monotonic()
        daemon.proc.send_signal(signal.SIGTERM)
        code = daemon.proc.wait(SHUTDOWN_TIMEOUT + 10)
        took = time.monotonic() - began
        stop.set()
        scraping.join(5)
    finally:
        daemon.stop()
        scorer.shutdown()
        scorer.server_close()
    log = daemon.log()
    assert code == 0, log[-3000:]
    assert took <= SHUTDOWN_TIMEOUT + MARGIN, f"exit after {took:.2f}s"

    found = _TOTALS.search(log)
    assert found is not None, log[-3000:]
    assert f"WARNING evald.service: {found.group(0)}" in log  # one line, at WARNING: cases were dropped
    totals = {k: int(v) for k, v in found.groupdict().items() if k not in ("took", "reasons")}
    reasons = {r.rsplit(" ", 1)[0]: int(r.rsplit(" ", 1)[1]) for r in (found["reasons"] or "").split(", ") if r}
    assert totals["lost"] == 0
    assert totals["cases"] == totals["scored"] + totals["dropped"] + totals["sampled"] + totals["none"]
    assert sum(reasons.values()) == totals["dropped"] > 0
    assert reasons.keys() <= {"shutdown", "shutdown_in_flight"}
    assert reasons.get("shutdown", 0) > 0 and totals["scored"] > 0

    final = last[-1]  # the last scrape before exit shows the same final counters
    assert value(final, "evald_cases_total") == totals["cases"]
    assert value(final, "evald_scored_cases_total") == totals["scored"]
    for reason, n in reasons.items():
        assert value(final, "evald_cases_dropped_total", reason=reason) == n
    assert value(final, "evald_cases_dropped_total") == totals["dropped"]
    # every span accepted is in a trace that was mapped (one llm_call case each) or dropped by the window
    llm_cases = value(final, "evald_cases_total", scope="llm_call")
    assert llm_cases + totals["spans"] == TRACES
    assert value(final, "evald_assembly_dropped_spans_total", reason="shutdown") == totals["spans"]
