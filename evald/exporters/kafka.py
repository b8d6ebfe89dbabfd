"""Kafka exporter: one JSON record per scored case (the replay line format), keyed by trace id, ``acks=all``.

Config keys (``exporters.kafka[/name]``, optional extra ``evald[kafka]``):
  brokers           bootstrap ``host:port`` list (default ``localhost:9092``)
  topic             topic written to (default ``evald_scores``)
  client_id         producer client id (default ``evald``)
  compression       ``none`` | ``gzip`` (default ``none``)
  max_record_size   records larger than this are dropped as ``permanent_error`` (default 1 MiB)
  timeout           per-attempt deadline of one batch (default 10s)
  sending_queue, retry_on_failure   the shared sending helper's blocks (evald/exporters/sending_policy.py)
  auth              ``sasl`` and ``tls`` as the kafka receiver's (evald/receivers/kafka_config.py); ``tls`` holds
                    the Collector's configtls client keys (evald/config/tls_client.py); default plaintext

Record: value = ``ScoredCase.to_json_line()`` as UTF-8 JSON (docs/replay-format.md), key = the trace id (lowercase
hex), so every score of one trace lands in one partition, as the Collector's ``partition_traces_by_id`` does.

Failure semantics: ``export`` only queues, and holds the pipeline's acknowledgement until each record is written
(or dropped and counted; with ``sending_queue.storage`` until it is fsync'ed to disk); a full queue makes the
pipeline wait (``block_on_overflow``, default) or drops and counts ``queue_full``. The producer connects
lazily on the first send, so a broker that is down at startup delays delivery instead of failing startup; any
broker error is retried with backoff until ``retry_on_failure.max_elapsed_time``, then counted as
``retries_exhausted``. A record over ``max_record_size`` is dropped as ``permanent_error``. Delivery is at least
once: a batch retried after a partial send may write some records twice (consumers dedupe by trace id, span id
and metric). ``shutdown(timeout)`` flushes the queue within the deadline and stops the producer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.errors import ConfigError, PermanentError
from evald.exporters.acks import current_ack
from evald.exporters.sending import SendingQueue
from evald.exporters.sending_policy import RetryableError, RetryOnFailureConfig, SendingQueueConfig
from evald.model import ScoredCase
from evald.receivers.kafka_config import KafkaAuthConfig, security_options
from evald.telemetry import Telemetry

logger = logging.getLogger(__name__)

Record = tuple[bytes, bytes]  # (key, value)


class KafkaExporterConfig(ComponentConfig):
    brokers: list[str] = Field(default_factory=lambda: ["localhost:9092"], min_length=1,
                               description="Bootstrap brokers, host:port.")
    topic: str = Field("evald_scores", min_length=1, description="Topic the scored cases are written to.")
    client_id: str = Field("evald", min_length=1, description="Producer client id.")
    compression: Literal["none", "gzip"] = Field("none", description="Record batch compression.")
    max_record_size: int = Field(1 << 20, gt=0, description="Larger records are dropped (permanent_error).")
    timeout: Duration = Field(10.0, gt=0, description="Deadline of one send attempt (a batch of records).")
    sending_queue: SendingQueueConfig = Field(SendingQueueConfig(), description="Bounded queue of records.")
    retry_on_failure: RetryOnFailureConfig = Field(RetryOnFailureConfig(), description="Backoff on broker errors.")
    auth: KafkaAuthConfig = Field(KafkaAuthConfig(), description="SASL and TLS (as the kafka receiver's `auth`).")


def encode_records(batch: Sequence[ScoredCase]) -> list[Record]:
    return [(scored.trace_id.encode("ascii", "replace"),
             json.dumps(scored.to_json_line(), ensure_ascii=False, default=str).encode("utf-8"))
            for scored in batch]


def _value_size(record: Record) -> int:
    return len(record[1])


def _encode_record(record: Record) -> bytes:
    """A record in the persistent queue: 4-byte big-endian key length, key, value."""
    key, value = record
    return len(key).to_bytes(4, "big") + key + value


def _decode_record(blob: bytes) -> Record:
    n = int.from_bytes(blob[:4], "big")
    if len(blob) < 4 + n:
        raise ValueError("truncated record")
    return blob[4:4 + n], blob[4 + n:]


class KafkaExporter:
    def __init__(self, config: KafkaExporterConfig, telemetry: Telemetry, *, component_id: str = "kafka") -> None:
        try:
            import aiokafka  # noqa: F401  (optional extra)
        except ImportError as err:
            raise ConfigError([(f"exporters.{component_id}", 'needs aiokafka: pip install "evald[kafka]"')]) from err
        self.id = component_id
        self.config = config
        self._producer: Any = None
        self._queue: SendingQueue[Record] = SendingQueue(
            component_id, self._send, telemetry, queue=config.sending_queue, retry=config.retry_on_failure,
            timeout=config.timeout, batch_size=500, max_item_bytes=config.max_record_size, size_of=_value_size,
            codec=(_encode_record, _decode_record),
        )

    async def start(self) -> None:
        await self._queue.start()

    @property
    def waits_for_room(self) -> bool:
        """``export`` waits while the sending queue is full (``block_on_overflow``): the pipeline must not time out."""
        return self._queue.blocks

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Queue one record per case, holding the pipeline's acknowledgement until each is written (module
        docstring); a record over max_record_size is dropped and counted by the queue."""
        await self._queue.put(encode_records(batch), current_ack())

    async def shutdown(self, timeout: float) -> None:
        try:
            await self._queue.shutdown(timeout)
        finally:
            producer, self._producer = self._producer, None
            if producer is not None:
                try:
                    await asyncio.wait_for(producer.stop(), timeout=2.0)
                except Exception as err:  # stopping must not fail the shutdown
                    logger.warning("exporter %s: producer did not stop cleanly: %s", self.id, err)

    async def _connect(self) -> Any:
        from aiokafka import AIOKafkaProducer

        cfg = self.config
        producer = AIOKafkaProducer(
            **security_options(cfg.auth), bootstrap_servers=cfg.brokers, client_id=cfg.client_id, acks="all",
            compression_type=None if cfg.compression == "none" else cfg.compression,
            max_request_size=max(cfg.max_record_size * 2, 1 << 20), request_timeout_ms=int(cfg.timeout * 1000),
        )
        try:
            await producer.start()
        except BaseException:
            await producer.stop()
            raise
        return producer

    async def _send(self, batch: list[Record]) -> None:
        from aiokafka.errors import KafkaError, MessageSizeTooLargeError

        try:
            if self._producer is None:
                self._producer = await self._connect()
            futures = [await self._producer.send(self.config.topic, value=value, key=key) for key, value in batch]
            await asyncio.gather(*futures)
        except MessageSizeTooLargeError as err:
            raise PermanentError(f"record too large for the broker: {err}") from err
        except KafkaError as err:
            raise RetryableError(f"{type(err).__name__}: {err}", reason="broker") from err
