"""Builds the OTel SDK's OTLP metric and log exporters (gRPC or HTTP) and the resource from an otlp config.

Imports the ``otlp`` extra (opentelemetry-exporter-otlp-proto-grpc / -http) lazily, only for the configured
protocol; ``OTLPExporterConfig`` has already refused a config whose extra is missing.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING

from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.resources import Resource

import evald

if TYPE_CHECKING:
    from evald.exporters.otlp import OTLPExporterConfig

#: One id per evald process: every otlp exporter of the process reports the same ``service.instance.id``.
SERVICE_INSTANCE_ID = str(uuid.uuid4())


def build_resource() -> Resource:
    """``service.name=evald`` (the evaluated apps' names are data point attributes), instance id and version."""
    return Resource.create({
        "service.name": "evald",
        "service.instance.id": SERVICE_INSTANCE_ID,
        "service.version": getattr(evald, "__version__", "unknown"),
    })


def _base_url(config: OTLPExporterConfig) -> tuple[str, bool]:
    """The endpoint as a URL, and whether it uses TLS (a scheme decides; otherwise ``tls.insecure``)."""
    endpoint = config.endpoint or ("localhost:4317" if config.protocol == "grpc" else "localhost:4318")
    if "://" in endpoint:
        return endpoint, endpoint.startswith("https://")
    secure = not config.tls.insecure
    return f"{'https' if secure else 'http'}://{endpoint}", secure


def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    with open(path, "rb") as fh:
        return fh.read()


def _headers(config: OTLPExporterConfig) -> dict[str, str]:
    return {k: v.get_secret_value() for k, v in config.headers.items()}


def build_exporters(config: OTLPExporterConfig) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    """The SDK exporters for the enabled signals (None for a disabled one)."""
    url, secure = _base_url(config)
    if config.protocol == "grpc":
        return _grpc_exporters(config, url, secure)
    return _http_exporters(config, url)


def _grpc_exporters(
    config: OTLPExporterConfig, url: str, secure: bool
) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    import grpc
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

    credentials = None
    if secure:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(config.tls.ca_file),
            private_key=_read(config.tls.key_file),
            certificate_chain=_read(config.tls.cert_file),
        )
    compression = grpc.Compression.Gzip if config.compression == "gzip" else grpc.Compression.NoCompression
    # gRPC metadata keys must be lowercase
    headers = {k.lower(): v for k, v in _headers(config).items()}
    common = {
        "endpoint": url, "insecure": not secure, "credentials": credentials, "headers": headers,
        "timeout": config.timeout, "compression": compression,
    }
    metrics = OTLPMetricExporter(**common) if config.metrics else None
    logs = OTLPLogExporter(**common) if config.events else None
    return metrics, logs


def _http_exporters(config: OTLPExporterConfig, url: str) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    base = url.rstrip("/")
    common = {
        "certificate_file": config.tls.ca_file, "client_key_file": config.tls.key_file,
        "client_certificate_file": config.tls.cert_file, "headers": _headers(config), "timeout": config.timeout,
        "compression": Compression.Gzip if config.compression == "gzip" else Compression.NoCompression,
    }
    metrics = OTLPMetricExporter(endpoint=f"{base}/v1/metrics", **common) if config.metrics else None  # type: ignore[arg-type]
    logs = OTLPLogExporter(endpoint=f"{base}/v1/logs", **common) if config.events else None  # type: ignore[arg-type]
    return metrics, logs


def environment_overrides() -> list[str]:
    """``OTEL_EXPORTER_OTLP_*`` variables set in the environment (the SDK reads some of them as fallbacks)."""
    return sorted(k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP_"))
