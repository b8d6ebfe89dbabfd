"""The ingest role's ``TraceConsumer``: every batch the OTLP receivers accept is split per trace and produced to
Kafka, keyed by the lowercase hex trace id (the Collector's Kafka exporter with ``partition_traces_by_id``).

Config keys (top-level ``ingest:``, used by ``evald run --role ingest``; optional extra ``evald[kafka]``)::

    ingest:
      brokers: [localhost:9092]
      traces: {topic: otlp_spans, encoding: otlp_proto}   # otlp_proto | otlp_json
      logs: {topic: otlp_logs, encoding: otlp_proto}      # null: log records are refused (partial success)
      client_id: evald-ingest
      acks: all                 # or 1 (leader only)
      linger: 5ms               # producer linger before a batch is sent
      max_batch_size: 262144    # bytes per partition batch
      max_record_size: 1048576  # a trace larger than this is refused (partial success)
      compression: none         # or gzip
      max_in_flight: 10000      # records produced but not yet acknowledged; beyond -> UNAVAILABLE / 503
      request_timeout: 5s       # how long the broker may take to acknowledge a request's records
      backoff: 1s               # retry hint sent to OTLP clients; also the reconnect delay
      auth: {sasl: ..., tls: ...}   # the kafka receiver's auth model (evald/receivers/kafka_config.py)

Acknowledgement: ``consume`` hands the records to the producer and returns a ``ConsumeResult`` whose
``durable`` future completes once the broker acknowledged every record of the batch (with ``acks``), or fails
with ``QueueFullError`` when it did not within ``request_timeout`` or the send failed. The OTLP receivers
(evald/receivers/ingest.py) answer the client only after it completes, so a success means the records are in
Kafka; a failure is an UNAVAILABLE / 503 with a retry hint, and the client retries (at least once: records that
reached the broker late are written again). The produce keeps running when the client goes away.

Refusals (``QueueFullError``, retryable, counted in ``evald_ingest_records_total{outcome}``): producer not
connected yet (``unavailable``), more than ``max_in_flight`` records waiting for acknowledgement (``refused``).
A trace whose record is over ``max_record_size`` is left out as partial success (``too_large``, not retryable).
The producer connects in the background (``start`` never blocks on the broker); readiness
(``ingest:kafka`` in /readyz) is false until it is connected.

Self-metrics: ``evald_ingest_records_total{topic,outcome}`` (``acked``, ``failed``, ``refused``,
``unavailable``, ``too_large``), ``evald_ingest_in_flight`` (records), ``evald_ingest_produce_seconds{topic}``
(from hand-over to acknowledgement of a batch's records).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.errors import ConfigError, QueueFullError
from evald.ingest.split import encode, split_logs, split_spans
from evald.model import ConsumeResult, SignalBatch
from evald.receivers.kafka_config import KafkaAuthConfig, KafkaEncoding, security_options
from evald.telemetry import RateLimitedLog, Telemetry, shared_instruments

logger = logging.getLogger(__name__)
_warn = RateLimitedLog(logger)

Record = tuple[bytes, bytes]  # key, value


class IngestTopicConfig(ComponentConfig):
    topic: str = Field(..., min_length=1, description="Topic the per-trace records are produced to.")
    encoding: KafkaEncoding = Field("otlp_proto", description="Record value encoding: otlp_proto or otlp_json.")


class IngestConfig(ComponentConfig):
    brokers: list[str] = Field(["localhost:9092"], min_length=1, description="Bootstrap brokers, host:port.")
    traces: IngestTopicConfig = Field(
        IngestTopicConfig(topic="otlp_spans"), description="Topic and encoding the traces are produced to."
    )
    logs: IngestTopicConfig | None = Field(
        IngestTopicConfig(topic="otlp_logs"),
        description="Topic and encoding of log records; `null` refuses them (partial success).",
    )
    client_id: str = Field("evald-ingest", min_length=1, description="Producer client id.")
    acks: Literal["all", 1] = Field("all", description="Broker acknowledgement the OTLP answer waits for.")
    linger: Duration = Field(0.005, ge=0, description="How long the producer waits to fill a batch.")
    max_batch_size: int = Field(256 * 1024, gt=0, description="Bytes per partition batch.")
    max_record_size: int = Field(1 << 20, gt=0, description="Largest record value; larger traces are refused.")
    compression: Literal["none", "gzip"] = Field("none", description="Record batch compression.")
    max_in_flight: int = Field(
        10_000, gt=0, description="Records not yet acknowledged; beyond it requests get UNAVAILABLE / 503."
    )
    request_timeout: Duration = Field(5.0, gt=0, description="How long the broker may take to acknowledge.")
    backoff: Duration = Field(1.0, gt=0, description="Retry hint sent to OTLP clients; reconnect delay.")
    auth: KafkaAuthConfig = Field(KafkaAuthConfig(), description="SASL and TLS (as the kafka receiver's `auth`).")

    @model_validator(mode="after")
    def _distinct_topics(self) -> IngestConfig:
        if self.logs is not None and self.logs.topic == self.traces.topic:
            raise ValueError("`traces.topic` and `logs.topic` must differ")
        return self


@dataclass(frozen=True, slots=True)
class _Metrics:
    records: Counter
    in_flight: Gauge
    latency: Histogram


def ingest_metrics(telemetry: Telemetry) -> _Metrics:
    """The ingest self-metrics on ``telemetry``'s registry (created once per registry)."""
    return shared_instruments(telemetry.registry, _build_metrics)


def _build_metrics(r: CollectorRegistry) -> _Metrics:
    return _Metrics(
        Counter("evald_ingest_records", "Per-trace records produced to Kafka, by outcome.", ["topic", "outcome"],
                registry=r),
        Gauge("evald_ingest_in_flight", "Records handed to the producer and not yet acknowledged.", registry=r),
        Histogram("evald_ingest_produce_seconds", "From hand-over to broker acknowledgement of a batch.",
                  ["topic"], registry=r,
                  buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)),
    )


def producer_options(config: IngestConfig) -> dict[str, Any]:
    """Keyword arguments for ``AIOKafkaProducer`` (security settings built by the kafka receiver's helper)."""
    options = security_options(config.auth)
    options.update(
        bootstrap_servers=list(config.brokers), client_id=config.client_id, acks=config.acks,
        enable_idempotence=False, linger_ms=int(config.linger * 1000), max_batch_size=config.max_batch_size,
        max_request_size=max(config.max_record_size + 4096, config.max_batch_size),
        request_timeout_ms=int(config.request_timeout * 1000),
        compression_type=None if config.compression == "none" else config.compression,
    )
    return options


class KafkaForwarder:
    """``TraceConsumer`` of the ingest role; ``start()`` / ``shutdown(timeout)`` like every component."""

    id = "ingest"

    def __init__(self, config: IngestConfig, telemetry: Telemetry) -> None:
        try:
            import aiokafka  # noqa: F401  (optional extra)
        except ImportError as err:
            raise ConfigError([("ingest", 'needs aiokafka: pip install "evald[kafka]"')]) from err
        self.config = config
        self._telemetry = telemetry
        self._metrics = ingest_metrics(telemetry)
        self._producer: Any = None
        self._connector: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[None]] = set()
        self._in_flight = 0
        self._closed = False
        telemetry.health.components["ingest:kafka"] = False

    @property
    def connected(self) -> bool:
        return self._producer is not None

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def start(self) -> None:
        if self._connector is None and not self._closed:
            self._connector = asyncio.create_task(self._connect_loop(), name="ingest-connect")

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        cfg = self.config
        by_topic: dict[str, list[Record]] = {}
        rejected_spans = rejected_logs = 0
        notes: list[str] = []
        if batch.spans:
            spans_by_trace = split_spans(batch.spans)
            too_large = self._records(spans_by_trace, cfg.traces, by_topic)
            if too_large:
                rejected_spans = sum(1 for s in batch.spans if s.trace_id in too_large)
                notes.append(f"{len(too_large)} trace(s) over ingest.max_record_size ({cfg.max_record_size} bytes)")
        if batch.logs:
            if cfg.logs is None:
                rejected_logs = len(batch.logs)
                notes.append("log records are not forwarded (ingest.logs is null)")
            else:
                too_large = self._records(split_logs(batch.logs), cfg.logs, by_topic)
                if too_large:
                    rejected_logs = sum(1 for log in batch.logs if log.trace_id in too_large)
                    notes.append(f"{len(too_large)} trace(s) of log records over ingest.max_record_size")
        n = sum(len(records) for records in by_topic.values())
        durable: asyncio.Future[None] | None = None
        if n:
            self._admit(by_topic, n)
            self._in_flight += n
            self._metrics.in_flight.set(self._in_flight)
            task = asyncio.get_running_loop().create_task(self._produce(by_topic, n))
            self._sends.add(task)
            task.add_done_callback(self._sent)
            durable = task
        return ConsumeResult(rejected_spans=rejected_spans, rejected_logs=rejected_logs, message="; ".join(notes),
                             durable=durable)

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        """``[batch]``: ``consume`` already produces one record per trace (``TraceConsumer.split``)."""
        return [batch]

    def _records(self, requests: dict[str, Any], topic: IngestTopicConfig,
                 by_topic: dict[str, list[Record]]) -> set[str]:
        """Encode one record per trace into ``by_topic``; the trace ids left out as too large."""
        records = by_topic.setdefault(topic.topic, [])
        too_large: set[str] = set()
        for trace_id, request in requests.items():
            value = encode(request, topic.encoding)
            if len(value) > self.config.max_record_size:
                too_large.add(trace_id)
                self._metrics.records.labels(topic.topic, "too_large").inc()
                continue
            records.append((trace_id.encode("ascii"), value))
        if not records:
            del by_topic[topic.topic]
        return too_large

    def _admit(self, by_topic: dict[str, list[Record]], n: int) -> None:
        """Raise ``QueueFullError`` (counted) when the producer is not connected or ``max_in_flight`` is reached."""
        if self._producer is None or self._closed:
            outcome, why = "unavailable", "the Kafka producer is not connected"
        elif self._in_flight + n > self.config.max_in_flight:
            outcome, why = "refused", f"{self._in_flight} records wait for the broker (ingest.max_in_flight)"
        else:
            return
        for topic, records in by_topic.items():
            self._metrics.records.labels(topic, outcome).inc(len(records))
        raise QueueFullError(f"ingest: {why}", retry_after=self.config.backoff)

    async def _produce(self, by_topic: dict[str, list[Record]], n: int) -> None:
        started = time.monotonic()
        failed: Exception | None = None
        try:
            for topic, records in by_topic.items():
                acked = 0
                try:
                    async with asyncio.timeout(self.config.request_timeout):
                        futures = [await self._producer.send(topic, value=value, key=key) for key, value in records]
                        results = await asyncio.gather(*futures, return_exceptions=True)
                    acked = sum(1 for result in results if not isinstance(result, BaseException))
                    errors = [result for result in results if isinstance(result, Exception)]
                    if errors:
                        failed = errors[0]
                except TimeoutError:
                    failed = TimeoutError(f"not acknowledged within {self.config.request_timeout:g}s")
                except Exception as err:  # KafkaError and anything the client raises: the records are not durable
                    failed = err
                self._metrics.records.labels(topic, "acked").inc(acked)
                if acked < len(records):
                    self._metrics.records.labels(topic, "failed").inc(len(records) - acked)
                else:
                    self._metrics.latency.labels(topic).observe(time.monotonic() - started)
        finally:
            self._in_flight -= n
            self._metrics.in_flight.set(self._in_flight)
        if failed is not None:
            _warn.log(logging.WARNING, f"ingest:{type(failed).__name__}", "ingest: produce failed: %s: %s",
                      type(failed).__name__, failed)
            raise QueueFullError(f"ingest: Kafka did not acknowledge: {type(failed).__name__}: {failed}",
                                 retry_after=self.config.backoff)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._sends.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved here: the receiver may have stopped waiting (client gone)

    async def _connect_loop(self) -> None:
        from aiokafka import AIOKafkaProducer

        options = producer_options(self.config)
        while not self._closed:
            producer = AIOKafkaProducer(**options)
            try:
                async with asyncio.timeout(self.config.request_timeout):
                    await producer.start()
            except Exception as err:
                _warn.log(logging.WARNING, "ingest:connect", "ingest: cannot connect to Kafka %s: %s: %s",
                          ",".join(self.config.brokers), type(err).__name__, err)
                await _stop(producer)
                await asyncio.sleep(self.config.backoff)
                continue
            self._producer = producer
            self._telemetry.health.components["ingest:kafka"] = True
            logger.info("ingest: producing to %s on %s", self.config.traces.topic, ",".join(self.config.brokers))
            return

    async def shutdown(self, timeout: float) -> None:
        """Wait (bounded) for records in flight, then flush and stop the producer. Idempotent."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + max(0.1, timeout)
        if self._connector is not None:
            self._connector.cancel()
            await asyncio.gather(self._connector, return_exceptions=True)
        if self._sends:
            await asyncio.wait(set(self._sends), timeout=max(0.1, deadline - time.monotonic()))
        producer, self._producer = self._producer, None
        if producer is not None:
            await _stop(producer, max(0.1, deadline - time.monotonic()))


async def _stop(producer: Any, timeout: float = 2.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            await producer.stop()
    except Exception as err:  # stopping must not fail the shutdown
        logger.warning("ingest: producer did not stop cleanly: %s: %s", type(err).__name__, err)
