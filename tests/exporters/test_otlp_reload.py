"""ExporterReloader (evald/exporters/otlp_reload.py) with real SDK grpc exporters: when the TLS files change, a new
exporter replaces the old one, which is shut down; files that cannot be used keep the exporter in use (logged once
per state) until they are whole. The otlp exporter wires it for grpc only when ``reload_interval`` is set."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs.export import LogRecordExporter

from evald.exporters.otlp import OTLPExporterConfig
from evald.exporters.otlp_client import _grpc_arguments, build_exporters
from evald.exporters.otlp_reload import ExporterReloader, ReloadingLogExporter, ReloadingMetricExporter
from tests.config.client_certs import make_client_pki


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replace(path: Path, content: bytes) -> None:
    tmp = path.with_suffix(".new")
    tmp.write_bytes(content)
    os.replace(tmp, path)


def config(ca: Path, **tls: object) -> OTLPExporterConfig:
    return OTLPExporterConfig.model_validate({
        "endpoint": "https://127.0.0.1:1", "tls": {"ca_file": str(ca), "server_name_override": "collector.internal",
                                                   **tls}})


def test_a_usable_change_replaces_the_exporter_and_a_broken_one_keeps_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old, new = make_client_pki(tmp_path / "old"), make_client_pki(tmp_path / "new")
    ca = tmp_path / "ca.crt"
    ca.write_bytes(old.ca.read_bytes())
    cfg = config(ca, reload_interval="10s")
    clock = Clock()

    def build() -> LogRecordExporter:
        return OTLPLogExporter(**_grpc_arguments(cfg, "https://127.0.0.1:1", True))

    reloader = ExporterReloader(build, cfg.tls, clock)
    first = reloader.exporter
    replace(ca, b"-----BEGIN CERTIFICATE-----\nhalf")
    assert reloader.current() is first  # not due yet: the files are not even looked at
    clock.now = 10.0
    with caplog.at_level(logging.WARNING, logger="evald.exporters.otlp_reload"):
        assert reloader.current() is first
        clock.now = 20.0
        assert reloader.current() is first
    assert (reloader.reloads, reloader.failures) == (0, 2)
    assert caplog.text.count("cannot be used yet") == 1  # once per state of the files
    replace(ca, new.ca.read_bytes())
    clock.now = 30.0
    second = reloader.current()
    assert second is not first and isinstance(second, OTLPLogExporter)
    assert (reloader.reloads, reloader.failures) == (1, 2)
    assert isinstance(first, OTLPLogExporter)
    assert first._shutdown and not second._shutdown  # the old channel is closed
    clock.now = 40.0
    assert reloader.current() is second  # unchanged files: nothing rebuilt
    second.shutdown()


def test_grpc_exporters_are_wrapped_only_with_reload_interval(tmp_path: Path) -> None:
    pki = make_client_pki(tmp_path)
    metrics, logs = build_exporters(config(pki.ca, reload_interval="1m"))
    assert isinstance(metrics, ReloadingMetricExporter) and isinstance(logs, ReloadingLogExporter)
    assert metrics._preferred_temporality == metrics.reloader.exporter._preferred_temporality
    metrics.shutdown()
    logs.shutdown()
    plain_metrics, plain_logs = build_exporters(config(pki.ca))
    assert not isinstance(plain_metrics, ReloadingMetricExporter) and isinstance(plain_logs, OTLPLogExporter)
    assert plain_metrics is not None
    plain_metrics.shutdown()
    plain_logs.shutdown()
