"""``create`` functions for the built-in factories (kept apart so components.py imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from evald.config.base import ComponentConfig
from evald.telemetry import Telemetry


def create_otlp(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> list[Any]:
    from evald.receivers.otlp import OTLPReceiverConfig, build_otlp_receivers

    assert isinstance(config, OTLPReceiverConfig)
    return list(build_otlp_receivers(config, telemetry, component_id))


def create_prometheus(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.prometheus import PrometheusExporter, PrometheusExporterConfig

    assert isinstance(config, PrometheusExporterConfig)
    return PrometheusExporter(config, telemetry, component_id=component_id)
