"""OTLP exporter: scores as OTLP metrics and one ``gen_ai.evaluation.result`` log event per score.

Config keys (``exporters.otlp[/name]``):
  endpoint               ``host:port`` or ``http(s)://host:port[/prefix]`` (default ``localhost:4317`` for grpc,
                         ``localhost:4318`` for http/protobuf); a scheme decides plaintext (http) or TLS (https)
  protocol               ``grpc`` (default) or ``http/protobuf`` (``/v1/metrics`` and ``/v1/logs`` are appended)
  headers                extra request headers / gRPC metadata; put secrets in ``${env:VAR}``, never logged
  tls                    ``insecure`` (plaintext when the endpoint has no scheme), ``ca_file``, ``cert_file``,
                         ``key_file`` (client certificate for mTLS; both or neither)
  compression            ``gzip`` (default) or ``none``
  timeout                deadline of one export call, the SDK exporter's own retries included (default 10s)
  export_interval        how often the metrics are pushed (default 15s)
  max_queue_size         events waiting for the batch processor (default 2048); beyond it new events are dropped
  max_export_batch_size  events per export request (default 512)
  schedule_delay         longest wait before a partial batch of events is sent (default 1s)
  max_attribute_sets     distinct metric attribute sets kept (default 2000); beyond it ``__overflow__`` (counted)
  metrics / events       switch either signal off

What is sent (docs/exporters.md): the histogram ``evald.evaluation.score`` (unit ``1``, buckets 0.1 .. 1.0), the
counter ``evald.evaluation.count`` (``evald.outcome`` = pass, fail, skipped, error), with exemplars carrying the
evaluated span's trace and span id, and a log record per score and per errored evaluation with
``event_name = gen_ai.evaluation.result`` whose trace/span id are the evaluated span's. Resource:
``service.name=evald``, ``service.instance.id`` (one per process), ``service.version``.

Failure semantics: ``export`` never waits on the network: metric values go into the SDK's in-memory aggregation
and events into a bounded queue drained by the SDK's batch worker thread; what cannot be handed over is counted
in ``evald_exporter_dropped_scores_total{exporter,reason}`` (``queue_full``, ``send_failed`` after the SDK
exporter gave up, ``shutdown`` for events not confirmed by the deadline, ``error``, ``not_started``;
delivered events go to ``evald_exporter_sent_scores_total``, waiting ones to ``evald_exporter_queue_size``,
the shared helper's series). The OTel SDK's own
queue (BatchLogRecordProcessor), retry (jittered exponential backoff honouring the server's RetryInfo, within
``timeout``) and cumulative metric temporality stand in for the shared sending helper: a failed metrics push
loses nothing, the next push carries the running totals. ``shutdown(timeout)`` force-flushes metrics and events
in parallel within the deadline, then shuts both providers down; SDK calls run on daemon threads, so a collector
that does not answer can delay shutdown by at most ``timeout`` seconds of the caller's deadline, never more.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, Self
from urllib.parse import urlparse

from pydantic import Field, SecretStr, field_validator, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.exporters.otlp_support import (
    case_context,
    metric_version,
    overflow_counter,
    run_in_daemon_thread,
)
from evald.exporters.routing import MetricInfo
from evald.exporters.sending import exporter_instruments
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


def _extra_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class OTLPTLSConfig(ComponentConfig):
    insecure: bool = Field(
        False, description="Plaintext when `endpoint` has no scheme (an http:// or https:// scheme decides itself)."
    )
    ca_file: str | None = Field(None, description="PEM file of the CA that signed the server's certificate.")
    cert_file: str | None = Field(None, description="PEM client certificate for mTLS (needs `key_file`).")
    key_file: str | None = Field(None, description="PEM private key of `cert_file`.")

    @field_validator("ca_file", "cert_file", "key_file")
    @classmethod
    def _file_exists(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_file():
            raise ValueError(f"{value!r} is not a readable file")
        return value

    @model_validator(mode="after")
    def _check_pairs(self) -> Self:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("`cert_file` and `key_file` go together (client certificate and its key)")
        if self.insecure and (self.ca_file or self.cert_file):
            raise ValueError("`insecure: true` cannot be combined with `ca_file`/`cert_file`")
        return self


class OTLPExporterConfig(ComponentConfig):
    endpoint: str | None = Field(
        None, description="`host:port` or `http(s)://host:port[/prefix]`; default localhost:4317 (grpc) / :4318."
    )
    protocol: Literal["grpc", "http/protobuf"] = Field("grpc", description="OTLP transport.")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="Request headers (gRPC metadata); use `${env:VAR}` for secrets."
    )
    tls: OTLPTLSConfig = Field(default_factory=OTLPTLSConfig, description="TLS settings.")
    compression: Literal["gzip", "none"] = Field("gzip", description="Payload compression.")
    timeout: Duration = Field(10.0, gt=0, description="Deadline of one export call, the SDK's own retries included.")
    export_interval: Duration = Field(15.0, gt=0, description="How often the score metrics are pushed.")
    max_queue_size: int = Field(2048, ge=1, description="Events waiting to be sent; beyond it new ones are dropped.")
    max_export_batch_size: int = Field(512, ge=1, description="Events per export request.")
    schedule_delay: Duration = Field(1.0, gt=0, description="Longest wait before a partial batch of events is sent.")
    max_attribute_sets: int = Field(
        2000, ge=1, description="Distinct metric attribute sets; beyond it they fold into `__overflow__` (counted)."
    )
    metrics: bool = Field(True, description="Send the score histogram and the evaluation counter.")
    events: bool = Field(True, description="Send one `gen_ai.evaluation.result` log record per score.")

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
        if self.max_export_batch_size > self.max_queue_size:
            raise ValueError(
                f"`max_export_batch_size` ({self.max_export_batch_size}) must be <= `max_queue_size` "
                f"({self.max_queue_size})"
            )
        if not (self.metrics or self.events):
            raise ValueError("`metrics` and `events` are both false: nothing to send")
        if self.endpoint and self.endpoint.startswith("http://") and (self.tls.ca_file or self.tls.cert_file):
            raise ValueError("an http:// endpoint is plaintext: drop `tls.ca_file`/`tls.cert_file` or use https://")
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
    """Hands each batch to the OTel SDK's metric aggregation and log batch processor (module docstring)."""

    def __init__(self, config: OTLPExporterConfig, telemetry: Telemetry, *, component_id: str = "otlp") -> None:
        self.id = component_id
        self.config = config
        self._telemetry = telemetry
        self._dropped = exporter_instruments(telemetry).dropped  # the shared sending helper's counter
        self._overflow = overflow_counter(telemetry).labels(component_id)
        self._log = RateLimitedLog(logger)
        self._metrics: ScoreMetrics | None = None
        self._events: EvaluationEvents | None = None
        self._infos: dict[str, MetricInfo] = {}
        self._started = False
        self._closed = False

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
        """Build the private providers (their worker threads start here); nothing is sent yet."""
        if self._started or self._closed:
            return
        from evald.exporters.otlp_client import build_exporters, build_resource, environment_overrides
        from evald.exporters.otlp_events import EvaluationEvents
        from evald.exporters.otlp_metrics import ScoreMetrics

        cfg = self.config
        metric_exporter, log_exporter = build_exporters(cfg)
        resource = build_resource()
        if metric_exporter is not None:
            self._metrics = ScoreMetrics(
                metric_exporter, resource, export_interval=cfg.export_interval, timeout=cfg.timeout,
                max_attribute_sets=cfg.max_attribute_sets, on_overflow=self._overflow.inc,
            )
        if log_exporter is not None:
            instruments = exporter_instruments(self._telemetry)
            self._events = EvaluationEvents(
                log_exporter, resource, max_queue_size=cfg.max_queue_size,
                max_export_batch_size=cfg.max_export_batch_size, schedule_delay=cfg.schedule_delay,
                timeout=cfg.timeout, on_drop=self._drop, on_sent=instruments.sent.labels(self.id).inc,
                version_of=self._version,
            )
            # the shared exporter gauges: events handed to the SDK's batch processor and not yet taken
            instruments.queue_size.labels(self.id).set_function(self._events.pending)
            instruments.queue_capacity.labels(self.id).set(cfg.max_queue_size)
        self._started = True
        logger.info("%s: sending scores over OTLP %s to %s", self.id, cfg.protocol, cfg.endpoint or "the default",
                    extra={"component": self.id})
        if overrides := environment_overrides():
            logger.info("%s: the OTel SDK may read these for settings left unset here: %s", self.id,
                        ", ".join(overrides), extra={"component": self.id})

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Record every score and hand its event to the bounded queue; never waits on the network."""
        if not self._started or self._closed:
            self._drop("shutdown" if self._closed else "not_started",
                       sum(len(s.scores) + len(s.errors) for s in batch))
            return
        for scored in batch:
            context = case_context(scored.case)
            try:
                if self._metrics is not None:
                    self._metrics.record(scored, context)
                if self._events is not None:
                    self._events.emit(scored, context)
            except Exception as err:  # never let one odd case break the batch
                self._drop("error", len(scored.scores) + len(scored.errors))
                self._log.log(logging.WARNING, f"otlp-export:{self.id}", "%s: could not record a scored case: %r",
                              self.id, err)

    async def shutdown(self, timeout: float) -> None:
        """Flush metrics and events within ``timeout``, then shut the providers down. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if not self._started:
            return
        deadline = time.monotonic() + max(0.0, timeout)
        flush_seconds = max(0.0, timeout) * _FLUSH_SHARE
        parts: list[_Signal] = [p for p in (self._metrics, self._events) if p is not None]

        def remaining() -> float:
            return max(0.0, deadline - time.monotonic())

        flushed = await asyncio.gather(*(
            run_in_daemon_thread(functools.partial(p.force_flush, int(flush_seconds * 1000)), flush_seconds,
                                 f"{self.id}-flush") for p in parts
        ))
        # a flush still running is stuck on the collector: end the SDK exporter's retries so shutdown can finish
        late = [p for p, done in zip(parts, flushed, strict=True) if done is None]
        await asyncio.gather(*(run_in_daemon_thread(p.abort, remaining(), f"{self.id}-abort") for p in late))
        budget = remaining()
        await asyncio.gather(*(
            run_in_daemon_thread(functools.partial(p.shutdown, int(budget * 1000)), budget, f"{self.id}-shutdown")
            for p in parts
        ))
        if self._events is not None:
            self._drop("shutdown", self._events.settle())
        if late:
            logger.warning("%s: flush did not finish within %.1fs (collector unreachable?); what was not sent is "
                           "counted in evald_exporter_dropped_scores_total", self.id, flush_seconds,
                           extra={"component": self.id})


class _Signal(Protocol):
    def force_flush(self, timeout_millis: int) -> bool: ...

    def abort(self) -> None: ...

    def shutdown(self, timeout_millis: int) -> None: ...
