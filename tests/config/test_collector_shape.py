"""Collector-shaped configs (evald/config/collector_shape.py): ``receivers.otlp.protocols`` and the Collector-only
sections, through the loader, ``evald validate`` and a live ``evald run``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client.parser import text_string_to_metric_families

from evald.config.collector_shape import COLLECTOR_SECTIONS
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.receivers.otlp import OTLPReceiverConfig
from tests.integration.daemon import Daemon

COLLECTOR_RECEIVER = """
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:14317
      http:
"""


def _problems(text: str) -> dict[str, str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    return dict(info.value.problems)


def test_protocols_shape_normalises_to_the_same_model() -> None:
    collector = parse_config(COLLECTOR_RECEIVER, environ={}).receivers["otlp"]
    evald = parse_config("receivers: {otlp: {grpc: {endpoint: 127.0.0.1:14317}, http: {}}}", environ={})
    assert isinstance(collector, OTLPReceiverConfig)
    assert collector == evald.receivers["otlp"]
    assert collector.http is not None and collector.http.endpoint == "0.0.0.0:4318"  # `http:` alone: defaults


def test_protocols_shape_serves_only_the_protocols_it_lists() -> None:
    grpc_only = parse_config("receivers: {otlp/in: {protocols: {grpc: null}}}", environ={}).receivers["otlp/in"]
    assert isinstance(grpc_only, OTLPReceiverConfig)
    assert grpc_only.grpc is not None and grpc_only.http is None


def test_both_shapes_in_one_block_is_an_error_naming_both() -> None:
    problems = _problems("receivers: {otlp: {protocols: {grpc: {}}, http: {}, grpc: {}}}")
    message = problems["receivers.otlp"]
    assert "`receivers.otlp.protocols`" in message
    assert "`receivers.otlp.grpc` and `receivers.otlp.http`" in message and "use one form" in message


@pytest.mark.parametrize("protocols", ["null", "{}"])
def test_empty_protocols_is_an_error(protocols: str) -> None:
    problems = _problems(f"receivers: {{otlp: {{protocols: {protocols}}}}}")
    assert problems["receivers.otlp.protocols"].startswith("lists no protocol: add `grpc:` and/or `http:`")


def test_problems_inside_protocols_are_reported_at_the_path_written() -> None:
    problems = _problems("receivers: {otlp: {protocols: {grpc: {endpont: x}, http: {endpoint: nope}}}}")
    assert problems["receivers.otlp.protocols.grpc.endpont"].endswith("did you mean 'endpoint'?")
    assert "invalid endpoint 'nope'" in problems["receivers.otlp.protocols.http.endpoint"]
    assert not [path for path in problems if path.startswith(("receivers.otlp.grpc", "receivers.otlp.http"))]


def test_collector_only_sections_say_what_to_do_instead() -> None:
    text = COLLECTOR_RECEIVER + """
processors: {batch: {}, memory_limiter: {limit_mib: 400}}
extensions: {health_check: {}}
connectors: {spanmetrics: {}}
service:
  extensions: [health_check]
  pipelines:
    traces: {receivers: [otlp], processors: [memory_limiter, batch], exporters: [prometheus]}
"""
    problems = _problems(text)
    assert set(problems) == set(COLLECTOR_SECTIONS)
    assert "no pipelines" in problems["service"] and "`pipelines:`" in problems["service"]
    assert "assembly.memory_limiter" in problems["processors"] and "sampling.ratio" in problems["processors"]
    assert "/healthz" in problems["extensions"] and "`auth:`" in problems["extensions"]
    assert not any("unknown key" in message for message in problems.values())


def test_evald_validate_explains_a_service_section(tmp_path: Path) -> None:
    path = tmp_path / "collector.yaml"
    path.write_text(COLLECTOR_RECEIVER + "service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n")
    result = subprocess.run([sys.executable, "-m", "evald", "validate", "--config", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "service: evald has no `service` section" in result.stderr
    path.write_text(COLLECTOR_RECEIVER)
    ok = subprocess.run([sys.executable, "-m", "evald", "validate", "--config", str(path)],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_collector_shaped_config_runs(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, "")
    daemon.config_path.write_text(f"""
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:{daemon.grpc_port}
exporters:
  prometheus: {{endpoint: "127.0.0.1:{daemon.metrics_port}"}}
metrics: [{{kind: error_free, scope: all}}]
""")
    with daemon:
        provider = TracerProvider(resource=Resource.create({"service.name": "collector-shaped"}))
        provider.add_span_processor(SimpleSpanProcessor(
            OTLPSpanExporter(endpoint=f"127.0.0.1:{daemon.grpc_port}", insecure=True, timeout=5)))
        with provider.get_tracer("t").start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                 "gen_ai.request.model": "gpt-4o-mini"})
        provider.shutdown()
        deadline, passes = time.monotonic() + 15, 0.0
        while time.monotonic() < deadline and not passes:
            time.sleep(0.2)
            passes = sum(s.value for f in text_string_to_metric_families(daemon.scrape()) for s in f.samples
                         if s.name == "evald_evaluations_total" and s.labels.get("outcome") == "pass"
                         and s.labels.get("service_name") == "collector-shaped")
        log = daemon.log()
    assert passes >= 1, log
    assert "OTLP/gRPC receiver listening" in log and "OTLP/HTTP receiver listening" not in log
