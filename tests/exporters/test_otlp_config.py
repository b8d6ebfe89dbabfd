"""otlp exporter config: defaults, validation messages with YAML paths, and the missing-extra error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.components import EXPORTER_FACTORIES
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.exporters.otlp import OTLPExporter, OTLPExporterConfig
from evald.exporters.otlp_client import _base_url, build_resource
from evald.exporters.otlp_support import case_context, error_type
from evald.telemetry import Telemetry


def problems(yaml_text: str) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        parse_config(yaml_text, environ={})
    return info.value.problems


def test_registered_with_a_default_config_and_two_named_instances() -> None:
    cfg = parse_config(
        "exporters:\n"
        "  otlp: {}\n"
        "  otlp/backup: { endpoint: 'https://otel.example.com:4318', protocol: http/protobuf,"
        " headers: { authorization: 'Bearer ${env:TOKEN}' } }\n",
        environ={"TOKEN": "s3cret"},
    )
    assert set(cfg.exporters) == {"otlp", "otlp/backup"}
    default = cfg.exporters["otlp"]
    assert isinstance(default, OTLPExporterConfig)
    assert (default.protocol, default.compression, default.timeout, default.export_interval) == (
        "grpc", "gzip", 10.0, 15.0)
    backup = cfg.exporters["otlp/backup"]
    assert isinstance(backup, OTLPExporterConfig)
    assert backup.headers["authorization"].get_secret_value() == "Bearer s3cret"
    assert "s3cret" not in repr(backup)  # secrets never end up in a log line
    telemetry = Telemetry()
    exporters = [EXPORTER_FACTORIES["otlp"].create(c, telemetry, i) for i, c in cfg.exporters.items()]
    assert [e.id for e in exporters] == ["otlp", "otlp/backup"]
    assert all(isinstance(e, OTLPExporter) for e in exporters)


def test_the_endpoint_scheme_or_tls_insecure_decides_plaintext() -> None:
    def url(**cfg: object) -> tuple[str, bool]:
        return _base_url(OTLPExporterConfig.model_validate(cfg))

    assert url() == ("https://localhost:4317", True)
    assert url(protocol="http/protobuf", tls={"insecure": True}) == ("http://localhost:4318", False)
    assert url(endpoint="collector:4317", tls={"insecure": True}) == ("http://collector:4317", False)
    assert url(endpoint="http://collector:4317") == ("http://collector:4317", False)
    assert url(endpoint="https://collector:4317") == ("https://collector:4317", True)


@pytest.mark.parametrize(
    ("block", "path", "message"),
    [
        ("{ endpoint: 'collector' }", "exporters.otlp.endpoint", "expected host:port"),
        ("{ endpoint: 'ftp://collector:21' }", "exporters.otlp.endpoint", "http(s)://host:port"),
        ("{ protocol: http }", "exporters.otlp.protocol", "grpc"),
        ("{ endpoint: 'http://c:4317/otlp' }", "exporters.otlp", "a grpc endpoint has no path"),
        ("{ compression: zstd }", "exporters.otlp.compression", "gzip"),
        ("{ timeout: 0s }", "exporters.otlp.timeout", "greater than 0"),
        ("{ sending_queue: { queue_size: 10 }, max_export_batch_size: 20 }", "exporters.otlp",
         "must be <= `sending_queue.queue_size`"),
        ("{ metrics: false, events: false }", "exporters.otlp", "nothing to send"),
        ("{ endpoint: 'https://c:4317', tls: { insecure: true } }", "exporters.otlp", "contradicts"),
        ("{ tls: { ca_file: /nonexistent/ca.pem } }", "exporters.otlp.tls.ca_file", "cannot read"),
        ("{ unknown_key: 1 }", "exporters.otlp.unknown_key", "unknown key"),
    ],
)
def test_invalid_configs_name_the_yaml_key(block: str, path: str, message: str) -> None:
    found = problems(f"exporters:\n  otlp: {block}\n")
    assert any(p == path and message in m for p, m in found), found


def test_client_certificate_needs_its_key(tmp_path: Path) -> None:
    cert = tmp_path / "client.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    found = problems(f"exporters:\n  otlp: {{ tls: {{ cert_file: '{cert}' }} }}\n")
    assert any(p == "exporters.otlp.tls" and "`key_file` is missing" in m for p, m in found), found


@pytest.mark.parametrize(
    ("protocol", "module"),
    [("grpc", "opentelemetry.exporter.otlp.proto.grpc"), ("http/protobuf", "opentelemetry.exporter.otlp.proto.http")],
)
def test_missing_extra_is_a_config_time_error_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch, protocol: str, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    found = problems(f"exporters:\n  otlp: {{ protocol: {protocol} }}\n")
    assert any(p == "exporters.otlp" and 'pip install "evald[otlp]"' in m for p, m in found), found


def test_resource_names_evald_and_its_instance() -> None:
    attrs = dict(build_resource().attributes)
    assert attrs["service.name"] == "evald"
    assert attrs["service.instance.id"] == dict(build_resource().attributes)["service.instance.id"]


def test_case_context_and_error_types() -> None:
    from opentelemetry.trace import get_current_span

    ctx = case_context(EvalCase(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7"))
    assert ctx is not None
    span = get_current_span(ctx).get_span_context()
    assert (f"{span.trace_id:032x}", f"{span.span_id:016x}", span.trace_flags.sampled) == (
        "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", True)
    assert case_context(EvalCase(trace_id="")) is None
    assert case_context(EvalCase(trace_id="not-hex")) is None
    assert error_type("timed out after 60s") == "timeout"
    assert error_type("KeyError: 'output'") == "KeyError"
    assert error_type("returned str, not Score or None") == "invalid_result"
    assert error_type("something odd") == "_OTHER"


async def test_shutdown_without_start_and_twice_is_safe() -> None:
    exporter = OTLPExporter(OTLPExporterConfig(), Telemetry())
    await exporter.shutdown(1.0)
    await exporter.shutdown(1.0)


def test_the_old_queue_keys_are_deprecated_aliases(caplog: pytest.LogCaptureFixture) -> None:
    config = OTLPExporterConfig.model_validate({"max_queue_size": 600, "schedule_delay": "1s",
                                                "sending_queue": {"num_consumers": 2}})
    assert (config.sending_queue.queue_size, config.sending_queue.num_consumers) == (600, 2)
    assert "max_queue_size is deprecated" in caplog.text and "schedule_delay is deprecated" in caplog.text
    with pytest.raises(ValidationError, match="not both"):
        OTLPExporterConfig.model_validate({"max_queue_size": 300, "sending_queue": {"queue_size": 5}})


def test_bad_values_raise_validation_errors() -> None:
    with pytest.raises(ValidationError):
        OTLPExporterConfig.model_validate({"max_attribute_sets": 0})
