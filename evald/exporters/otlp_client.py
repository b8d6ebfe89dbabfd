"""Builds the OTel SDK's OTLP metric and log exporters (gRPC or HTTP) and the resource from an otlp config.

Imports the ``otlp`` extra (opentelemetry-exporter-otlp-proto-grpc / -http) lazily, only for the configured
protocol; ``OTLPExporterConfig`` has already refused a config whose extra is missing.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any

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


def _headers(config: OTLPExporterConfig) -> dict[str, str]:
    return {k: v.get_secret_value() for k, v in config.headers.items()}


def build_exporters(config: OTLPExporterConfig) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    """The SDK exporters for the enabled signals (None for a disabled one)."""
    url, secure = _base_url(config)
    if config.protocol == "grpc":
        return _grpc_exporters(config, url, secure)
    return _http_exporters(config, url, secure)


def _grpc_exporters(
    config: OTLPExporterConfig, url: str, secure: bool
) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

    def build_metrics() -> MetricExporter:
        return OTLPMetricExporter(**_grpc_arguments(config, url, secure))

    def build_logs() -> LogRecordExporter:
        return OTLPLogExporter(**_grpc_arguments(config, url, secure))

    if not (secure and config.tls.reload_interval and config.tls.files()):
        return (build_metrics() if config.metrics else None), (build_logs() if config.events else None)
    # the credentials of a grpc channel are fixed: reloading rebuilds the SDK exporter (otlp_reload.py)
    from evald.exporters.otlp_reload import ExporterReloader, ReloadingLogExporter, ReloadingMetricExporter

    metrics = ReloadingMetricExporter(ExporterReloader(build_metrics, config.tls)) if config.metrics else None
    logs = ReloadingLogExporter(ExporterReloader(build_logs, config.tls)) if config.events else None
    return metrics, logs


def _grpc_arguments(config: OTLPExporterConfig, url: str, secure: bool) -> dict[str, Any]:
    """Keyword arguments of the SDK's grpc exporters, with the TLS files and PEM read now."""
    import grpc

    credentials, options = None, None
    if secure:
        ca, cert, key = config.tls.read_pem()
        credentials = grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)
        if config.tls.server_name_override:
            # grpc checks the server's certificate against (and sends as SNI) this name instead of the host
            options = (("grpc.ssl_target_name_override", config.tls.server_name_override),)
    compression = grpc.Compression.Gzip if config.compression == "gzip" else grpc.Compression.NoCompression
    # gRPC metadata keys must be lowercase
    headers = {k.lower(): v for k, v in _headers(config).items()}
    return {"endpoint": url, "insecure": not secure, "credentials": credentials, "headers": headers,
            "timeout": config.timeout, "compression": compression, "channel_options": options}


def _http_exporters(
    config: OTLPExporterConfig, url: str, secure: bool
) -> tuple[MetricExporter | None, LogRecordExporter | None]:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    from evald.config.tls_client_context import requests_session

    base = url.rstrip("/")
    headers = _headers(config)
    compression = Compression.Gzip if config.compression == "gzip" else Compression.NoCompression
    # https: one session per SDK exporter whose TLS is the `tls` block alone (evald/config/tls_client_context.py)
    metrics = logs = None
    if config.metrics:
        session = requests_session(config.tls) if secure else None
        metrics = OTLPMetricExporter(endpoint=f"{base}/v1/metrics", session=session, headers=headers,
                                     timeout=config.timeout, compression=compression)
    if config.events:
        session = requests_session(config.tls) if secure else None
        logs = OTLPLogExporter(endpoint=f"{base}/v1/logs", session=session, headers=headers, timeout=config.timeout,
                               compression=compression)
    return metrics, logs


def environment_overrides() -> list[str]:
    """``OTEL_EXPORTER_OTLP_*`` variables set in the environment (the SDK reads some of them as fallbacks)."""
    return sorted(k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP_"))
