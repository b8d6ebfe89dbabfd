"""Component factories: one line per built-in type; the YAML id is ``type[/name]`` as in the Collector.

A factory pairs a type name with its pydantic config model (whose defaults ARE the default config) and a
``create`` function. Config models are imported lazily so optional extras are only needed when used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evald.config.base import ComponentConfig
from evald.telemetry import Telemetry


@dataclass(frozen=True, slots=True)
class Factory:
    kind: str  # the type name in config ids (``type[/name]``)
    config_path: str  # "module:ConfigClass"
    create_path: str  # "module:function(config, telemetry, id) -> component(s)"
    stability: str = "development"

    def config_model(self) -> type[ComponentConfig]:
        model = _resolve(self.config_path)
        assert isinstance(model, type) and issubclass(model, ComponentConfig)
        return model

    def create(self, config: ComponentConfig, telemetry: Telemetry, component_id: str) -> Any:
        fn: Callable[[ComponentConfig, Telemetry, str], Any] = _resolve(self.create_path)
        return fn(config, telemetry, component_id)


def _resolve(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


RECEIVER_FACTORIES: dict[str, Factory] = {
    "otlp": Factory("otlp", "evald.receivers.otlp:OTLPReceiverConfig", "evald.components_create:create_otlp"),
    "kafka": Factory("kafka", "evald.receivers.kafka:KafkaReceiverConfig", "evald.components_create:create_kafka"),
}

EXPORTER_FACTORIES: dict[str, Factory] = {
    "prometheus": Factory(
        "prometheus", "evald.exporters.prometheus:PrometheusExporterConfig",
        "evald.components_create:create_prometheus",
    ),
    "langfuse": Factory(
        "langfuse", "evald.exporters.langfuse:LangfuseExporterConfig", "evald.components_create:create_langfuse"
    ),
    "file": Factory("file", "evald.exporters.file:FileExporterConfig", "evald.components_create:create_file"),
    "debug": Factory("debug", "evald.exporters.debug:DebugExporterConfig", "evald.components_create:create_debug"),
    "kafka": Factory(
        "kafka", "evald.exporters.kafka:KafkaExporterConfig", "evald.components_create:create_kafka_exporter"
    ),
    "otlp": Factory(
        "otlp", "evald.exporters.otlp:OTLPExporterConfig", "evald.components_create:create_otlp_exporter"
    ),
}


def component_type(component_id: str) -> str:
    return component_id.split("/", 1)[0]
