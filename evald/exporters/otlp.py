"""OTLP exporter: scores as OTLP metrics and one ``gen_ai.evaluation.result`` log event per score.

Config keys (``exporters.otlp[/name]``):
  endpoint               ``host:port`` or ``http(s)://host:port[/prefix]`` (default ``localhost:4317`` for grpc,
                         ``localhost:4318`` for http/protobuf); a scheme decides plaintext (http) or TLS (https)
  protocol               ``grpc`` (default) or ``http/protobuf`` (``/v1/metrics`` and ``/v1/logs`` are appended)
  headers                extra request headers / gRPC metadata; put secrets in ``${env:VAR}``, never logged
  tls                    the Collector's configtls client keys (evald/config/tls_client.py): ``insecure``
                         (plaintext when the endpoint has no scheme), ``ca_file``/``ca_pem``,
                         ``cert_file``/``cert_pem`` + ``key_file``/``key_pem`` (mTLS), ``server_name_override``,
                         ``insecure_skip_verify``, ``min_version``/``max_version``, ``reload_interval``; with
                         ``grpc``, ``insecure_skip_verify`` and the versions are refused (grpc's Python credentials
                         lack them) and ``reload_interval`` rebuilds the SDK exporter (otlp_reload.py)
  compression            ``gzip`` (default) or ``none``; ``metrics`` / ``events``: switch either signal off
  timeout                deadline of one export attempt, the SDK exporter's own quick retries included (default 10s)
  export_interval        how often the metrics are pushed (default 15s)
  max_export_batch_size  events per export request (default 512)
  sending_queue, retry_on_failure   the events' sending helper (evald/exporters/sending.py), as for langfuse and
                         kafka (deprecated: ``max_queue_size`` = ``sending_queue.queue_size``; ``schedule_delay``)
  max_attribute_sets     distinct metric attribute sets kept (default 2000); beyond it ``__overflow__`` (counted)

What is sent (docs/exporters.md): the histogram ``evald.evaluation.score`` (unit ``1``, buckets 0.1 .. 1.0), the
counter ``evald.evaluation.count`` (``evald.outcome`` = pass, fail, skipped, error), with exemplars carrying the
evaluated span's trace and span id, and a log record per score and per errored evaluation with
``event_name = gen_ai.evaluation.result`` whose trace/span id are the evaluated span's. Resource:
``service.name=evald``, ``service.instance.id`` (one per process), ``service.version``.

Failure semantics: events go through the shared sending helper (queue -> retry with backoff -> per-attempt
``timeout``), like the langfuse and kafka exporters: ``export`` queues one item per event and holds the pipeline's
acknowledgement until the collector accepted it or it was dropped and counted; a full queue makes the pipeline wait
(``sending_queue.block_on_overflow``, default) or drops as ``queue_full``; a collector that is down or refuses is
retried until ``retry_on_failure.max_elapsed_time`` (``retries_exhausted``); ``sending_queue.storage`` keeps the
queue on disk across restarts. Counters (``evald_exporter_*``) count events. Metrics are cumulative aggregates pushed
every ``export_interval`` by the SDK's periodic reader: a failed push loses nothing (the next push carries the
running totals), so they need no queue and hold no acknowledgement. ``shutdown(timeout)`` sends the queued events and
flushes the metrics in parallel within the deadline, then shuts both down; SDK calls run on daemon threads, so a
collector that does not answer can never delay shutdown past the caller's deadline.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self
from urllib.parse import urlparse

from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from pydantic import Field, SecretStr, field_validator, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.config.tls_client import ClientTLSConfig
from evald.errors import PermanentError
from evald.exporters.acks import current_ack
from evald.exporters.otlp_support import (
    case_context,
    deprecated_queue_keys,
    metric_version,
    overflow_counter,
    run_in_daemon_thread,
    shutdown_exporter,
)
from evald.exporters.routing import MetricInfo
from evald.exporters.sending import SendingQueue, exporter_instruments
from evald.exporters.sending_policy import RetryableError, RetryOnFailureConfig, SendingQueueConfig
from evald.model import ScoredCase
from evald.telemetry import RateLimitedLog, Telemetry

if TYPE_CHECKING:
    from evald.exporters.otlp_events import EvaluationEvents
    from evald.exporters.otlp_metrics import ScoreMetrics

logger = logging.getLogger(__name__)

#: protocol -> (module, the package of the ``otlp`` extra that ships it)
_EXTRA_MODULES = {
    "grpc": ("opentelemetry.exporter.otlp.proto.grpc", "opentelemetry-exporter-otlp-proto-grpc"),
    "http/protobuf": ("opentelemetry.exporter.otlp.proto.http", "opentelemetry-exporter-otlp-proto-http"),
}
#: Share of the shutdown deadline given to the flush; the rest is for shutting the providers down.
_FLUSH_SHARE = 0.8
#: An attempt's deadline beyond the SDK exporter's own ``timeout`` (it ends its retries by then itself).
_ATTEMPT_MARGIN = 2.0


def _extra_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class OTLPExporterConfig(ComponentConfig):
    endpoint: str | None = Field(
        None, description="`host:port` or `http(s)://host:port[/prefix]`; default localhost:4317 (grpc) / :4318."
    )
    protocol: Literal["grpc", "http/protobuf"] = Field("grpc", description="OTLP transport.")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Request headers (gRPC metadata); use `${env:VAR}` for secrets."
    )
    tls: ClientTLSConfig = Field(
        default_factory=ClientTLSConfig, description="Client TLS: the Collector's configtls client keys."
    )
    compression: Literal["gzip", "none"] = Field("gzip", description="Payload compression.")
    timeout: Duration = Field(
        10.0, gt=0, description="Deadline of one export attempt, the SDK exporter's quick retries included."
    )
    export_interval: Duration = Field(15.0, gt=0, description="How often the score metrics are pushed.")
    max_export_batch_size: int = Field(512, ge=1, description="Events per export request.")
    sending_queue: SendingQueueConfig = Field(SendingQueueConfig(), description="Bounded queue of events to send.")
    retry_on_failure: RetryOnFailureConfig = Field(RetryOnFailureConfig(), description="Retry with backoff.")
    max_attribute_sets: int = Field(
        2000, ge=1, description="Distinct metric attribute sets; beyond it they fold into `__overflow__` (counted)."
    )
    metrics: bool = Field(True, description="Send the score histogram and the evaluation counter.")
    events: bool = Field(True, description="Send one `gen_ai.evaluation.result` log record per score.")

    @model_validator(mode="before")
    @classmethod
    def _deprecated_keys(cls, data: Any) -> Any:
        """``max_queue_size`` / ``schedule_delay``: deprecated (evald/exporters/otlp_support.py)."""
        return deprecated_queue_keys(data)

    @field_validator("endpoint")
    @classmethod
    def _valid_endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if "://" in value:
            parsed = urlparse(value)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError(f"invalid endpoint {value!r}: expected http(s)://host:port or host:port")
            return value
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535:
            raise ValueError(f"invalid endpoint {value!r}: expected host:port or http(s)://host:port")
        return value

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.max_export_batch_size > self.sending_queue.queue_size:
            raise ValueError(
                f"`max_export_batch_size` ({self.max_export_batch_size}) must be <= `sending_queue.queue_size` "
                f"({self.sending_queue.queue_size})"
            )
        if not (self.metrics or self.events):
            raise ValueError("`metrics` and `events` are both false: nothing to send")
        tls_keys = sorted(self.tls.model_fields_set - {"insecure"})
        if self.endpoint and self.endpoint.startswith("http://") and tls_keys:
            raise ValueError(f"an http:// endpoint is plaintext: drop {', '.join(f'`tls.{k}`' for k in tls_keys)} "
                             "or use https://")
        if self.protocol == "grpc" and (grpc_problems := self.tls.supported_by_grpc("tls.")):
            raise ValueError("; ".join(grpc_problems))
        if self.protocol == "grpc" and "://" in (self.endpoint or "") and urlparse(self.endpoint).path not in ("", "/"):
            raise ValueError(f"a grpc endpoint has no path ({self.endpoint!r}); paths are for http/protobuf")
        if self.endpoint and self.endpoint.startswith("https://") and self.tls.insecure:
            raise ValueError("an https:// endpoint uses TLS: `tls.insecure: true` contradicts it")
        module, package = _EXTRA_MODULES[self.protocol]
        if not _extra_installed(module):
            raise ValueError(
                f'protocol {self.protocol} needs {package}, which is not installed: pip install "evald[otlp]"'
            )
        return self


class OTLPExporter:
    """Score metrics through the OTel SDK's aggregation; events through the shared sending queue (docstring)."""

    def __init__(self, config: OTLPExporterConfig, telemetry: Telemetry, *, component_id: str = "otlp") -> None:
        self.id = component_id
        self.config = config
        self._telemetry = telemetry
        self._dropped = exporter_instruments(telemetry).dropped  # the shared sending helper's counter
        self._overflow = overflow_counter(telemetry).labels(component_id)
        self._log = RateLimitedLog(logger)
        self._metrics: ScoreMetrics | None = None
        self._events: EvaluationEvents | None = None
        self._log_exporter: LogRecordExporter | None = None
        self._queue: SendingQueue[bytes] | None = None
        if config.events:
            self._queue = SendingQueue(
                component_id, self._send, telemetry, queue=config.sending_queue, retry=config.retry_on_failure,
                timeout=config.timeout + _ATTEMPT_MARGIN, batch_size=config.max_export_batch_size,
                codec=(bytes, bytes),
            )
        self._infos: dict[str, MetricInfo] = {}
        self._started = False
        self._closed = False

    @property
    def queue(self) -> SendingQueue[bytes] | None:
        return self._queue

    @property
    def waits_for_room(self) -> bool:
        """``export`` waits while the event queue is full (``block_on_overflow``): the pipeline sets no deadline."""
        return self._queue is not None and self._queue.blocks

    def set_metric_info(self, infos: Mapping[str, MetricInfo]) -> None:
        """Facts about the configured metrics (their versions go into ``evald.metric.version``)."""
        self._infos = dict(infos)

    def _version(self, name: str) -> str | None:
        info = self._infos.get(name)
        return info.version if info is not None else metric_version(name)

    def _drop(self, reason: str, count: int = 1) -> None:
        if count > 0:
            self._dropped.labels(self.id, reason).inc(count)

    async def start(self) -> None:
        """Build the SDK exporters and the metrics provider, open the event queue; nothing is sent yet."""
        if self._started or self._closed:
            return
        from evald.exporters.otlp_client import build_exporters, build_resource, environment_overrides
        from evald.exporters.otlp_events import EvaluationEvents
        from evald.exporters.otlp_metrics import ScoreMetrics

        cfg = self.config
        metric_exporter, self._log_exporter = build_exporters(cfg)
        resource = build_resource()
        if metric_exporter is not None:
            self._metrics = ScoreMetrics(
                metric_exporter, resource, export_interval=cfg.export_interval, timeout=cfg.timeout,
                max_attribute_sets=cfg.max_attribute_sets, on_overflow=self._overflow.inc,
            )
        if self._log_exporter is not None and self._queue is not None:
            self._events = EvaluationEvents(resource, version_of=self._version)
            await self._queue.start()
        self._started = True
        logger.info("%s: sending scores over OTLP %s to %s", self.id, cfg.protocol, cfg.endpoint or "the default",
                    extra={"component": self.id})
        if overrides := environment_overrides():
            logger.info("%s: the OTel SDK may read these for settings left unset here: %s", self.id,
                        ", ".join(overrides), extra={"component": self.id})

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Record every score's metrics and queue its event, holding the pipeline's acknowledgement until the event
        is delivered or dropped and counted; never waits on the network (a full queue waits for room)."""
        if not self._started or self._closed:
            self._drop("shutdown" if self._closed else "not_started",
                       sum(len(s.scores) + len(s.errors) for s in batch))
            return
        items: list[bytes] = []
        for scored in batch:
            try:
                if self._metrics is not None:
                    self._metrics.record(scored, case_context(scored.case))
                if self._events is not None:
                    items += self._events.encode(scored)
            except Exception as err:  # never let one odd case break the batch
                self._drop("error", len(scored.scores) + len(scored.errors))
                self._log.log(logging.WARNING, f"otlp-export:{self.id}", "%s: could not record a scored case: %r",
                              self.id, err)
        if items and self._queue is not None:
            await self._queue.put(items, current_ack())

    async def _send(self, batch: list[bytes]) -> None:
        if self._events is None or self._log_exporter is None:
            raise RetryableError("exporter not started")
        records = self._events.build(batch)
        if not records:
            raise PermanentError("no event of the batch decodes")
        result = await run_in_daemon_thread(functools.partial(self._log_exporter.export, records),
                                            self.config.timeout + _ATTEMPT_MARGIN / 2, f"{self.id}-export")
        if result is None:
            raise RetryableError("export call timed out or raised", reason="timeout")
        if result is not LogRecordExportResult.SUCCESS:
            raise RetryableError("the collector did not accept the events (unreachable, or refused)",
                                 reason="network")

    async def shutdown(self, timeout: float) -> None:
        """Send queued events and flush metrics within ``timeout``, then shut the SDK parts down. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if not self._started:
            return
        deadline = time.monotonic() + max(0.0, timeout)
        flush_seconds = max(0.0, timeout) * _FLUSH_SHARE

        def remaining() -> float:
            return max(0.0, deadline - time.monotonic())

        metrics = self._metrics
        jobs: list[Awaitable[object]] = []
        if self._queue is not None:
            jobs.append(self._queue.shutdown(flush_seconds))
        if metrics is not None:
            jobs.append(run_in_daemon_thread(functools.partial(metrics.force_flush, int(flush_seconds * 1000)),
                                             flush_seconds, f"{self.id}-flush"))
        flushed = await asyncio.gather(*jobs)
        if metrics is not None and flushed[-1] is None:  # stuck on the collector: end the SDK exporter's retries
            await run_in_daemon_thread(metrics.abort, remaining(), f"{self.id}-abort")
            logger.warning("%s: metrics flush did not finish within %.1fs (collector unreachable?)", self.id,
                           flush_seconds, extra={"component": self.id})
        budget = remaining()
        parts: list[Callable[[], object]] = []
        if metrics is not None:
            parts.append(functools.partial(metrics.shutdown, int(budget * 1000)))
        if self._log_exporter is not None:
            parts.append(functools.partial(shutdown_exporter, self._log_exporter, budget))
        if self._events is not None:
            parts.append(self._events.provider.shutdown)
        await asyncio.gather(*(run_in_daemon_thread(p, budget, f"{self.id}-shutdown") for p in parts))

