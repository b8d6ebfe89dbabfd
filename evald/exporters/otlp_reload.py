"""Certificate reload for the otlp exporter over grpc: ``tls.reload_interval`` with ``protocol: grpc``.

Config keys used: ``tls.reload_interval`` and the files it watches, ``tls.ca_file``, ``tls.cert_file``,
``tls.key_file`` (evald/config/tls_client.py). Over http/protobuf the TLS context itself reloads
(evald/config/tls_client_context.py); grpc's Python channel credentials are fixed when a channel is made, so here
the SDK exporter is rebuilt instead: before an export, when at least ``reload_interval`` has passed since the last
check and the files changed (mtime, size or inode), the new files are checked (PEM, key matches certificate) and a
new SDK exporter (a new channel with the new credentials) replaces the old one, which is shut down. The SDK's
metric reader and evald's event queue keep calling the same wrapper.

Failure semantics: files that cannot be used (missing, half written, a key that does not match) are logged once as
a WARNING and the exporter in use is kept; they are checked again after the next interval. A reload never raises
into an export. An export running on the old exporter while it is replaced may fail; both callers already retry
(the event queue) or carry the totals in the next push (cumulative metrics).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData

from evald.config.file_watch import FileWatch
from evald.config.tls_client import ClientTLSConfig, build_client_context

logger = logging.getLogger(__name__)

E = TypeVar("E", MetricExporter, LogRecordExporter)


class ExporterReloader(Generic[E]):
    """Holds the current SDK exporter; ``current()`` rebuilds it after a usable change of the TLS files."""

    def __init__(self, build: Callable[[], E], tls: ClientTLSConfig, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._build: Callable[[], E] = build
        self._tls = tls
        self._watch = FileWatch(tls.files(), float(tls.reload_interval or 0.0), "otlp", clock)
        self.exporter: E = build()
        self.reloads = 0

    @property
    def failures(self) -> int:
        return self._watch.failures

    def current(self) -> E:
        try:
            fresh = self._watch.poll(self._rebuild)
        except Exception:  # never raise into an export: keep the exporter in use
            logger.exception("otlp: TLS reload failed; keeping the connection settings in use")
            return self.exporter
        if fresh is not None:
            old, self.exporter = self.exporter, fresh
            self.reloads += 1
            logger.info("otlp: TLS files %s changed: reconnecting with them", ", ".join(self._watch.paths))
            _shutdown(old)
        return self.exporter

    def _rebuild(self) -> E:
        build_client_context(self._tls)  # the new files are whole and match (raises ValueError naming the key)
        return self._build()


def _shutdown(exporter: Any) -> None:
    try:
        exporter.shutdown()
    except Exception:  # the old channel is dropped either way
        logger.debug("otlp: shutting the replaced exporter down failed", exc_info=True)


class ReloadingMetricExporter(MetricExporter):
    """A metric exporter that sends through :class:`ExporterReloader`'s current SDK exporter."""

    def __init__(self, reloader: ExporterReloader[MetricExporter]) -> None:
        inner = reloader.exporter
        super().__init__(preferred_temporality=inner._preferred_temporality,
                         preferred_aggregation=inner._preferred_aggregation)
        self.reloader = reloader

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        return self.reloader.current().export(metrics_data, timeout_millis, **kwargs)

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.reloader.exporter.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.reloader.exporter.shutdown(timeout_millis, **kwargs)


class ReloadingLogExporter(LogRecordExporter):
    """A log record exporter that sends through :class:`ExporterReloader`'s current SDK exporter."""

    def __init__(self, reloader: ExporterReloader[LogRecordExporter]) -> None:
        self.reloader = reloader

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        return self.reloader.current().export(batch)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.reloader.exporter.force_flush(timeout_millis)

    def shutdown(self, *args: Any, **kwargs: Any) -> None:
        shutdown: Callable[..., None] = self.reloader.exporter.shutdown  # the SDK's takes timeout_millis or nothing
        shutdown(*args, **kwargs)
