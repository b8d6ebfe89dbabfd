"""``create`` functions for the built-in factories (kept apart so components.py imports nothing heavy)."""

from __future__ import annotations

from typing import Any

from evald.config.base import ComponentConfig
from evald.telemetry import Telemetry


def create_otlp(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> list[Any]:
    from evald.receivers.otlp import OTLPReceiverConfig, build_otlp_receivers

    assert isinstance(config, OTLPReceiverConfig)
    return list(build_otlp_receivers(config, telemetry, component_id))


def create_kafka(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> list[Any]:
    from evald.receivers.kafka import KafkaReceiverConfig, build_kafka_receivers

    assert isinstance(config, KafkaReceiverConfig)
    return build_kafka_receivers(config, telemetry, component_id)


def create_prometheus(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.prometheus import PrometheusExporter, PrometheusExporterConfig

    assert isinstance(config, PrometheusExporterConfig)
    return PrometheusExporter(config, telemetry, component_id=component_id)


def create_kafka_exporter(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.kafka import KafkaExporter, KafkaExporterConfig

    assert isinstance(config, KafkaExporterConfig)
    return KafkaExporter(config, telemetry, component_id=component_id)


def create_langfuse(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.langfuse import LangfuseExporter, LangfuseExporterConfig

    assert isinstance(config, LangfuseExporterConfig)
    return LangfuseExporter(config, telemetry, component_id=component_id)


def create_file(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.file import FileExporter, FileExporterConfig

    assert isinstance(config, FileExporterConfig)
    return FileExporter(config, telemetry, component_id=component_id)


def create_debug(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.debug import DebugExporter, DebugExporterConfig

    assert isinstance(config, DebugExporterConfig)
    return DebugExporter(config, component_id=component_id)


def create_otlp_exporter(config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
    from evald.exporters.otlp import OTLPExporter, OTLPExporterConfig

    assert isinstance(config, OTLPExporterConfig)
    return OTLPExporter(config, telemetry, component_id=component_id)
