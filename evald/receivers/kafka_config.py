"""Config model, consumer options and self-metrics of the ``kafka`` receiver.

Config keys (``receivers: kafka[/<name>]:``), mirroring the Collector's ``kafkareceiver``::

    receivers:
      kafka:
        brokers: [localhost:9092]
        traces: {topic: otlp_spans, encoding: otlp_proto}   # otlp_proto | otlp_json; null disables
        logs: null                                         # e.g. {topic: otlp_logs, encoding: otlp_proto}
        group_id: evald                   # client_id: evald as well
        initial_offset: latest            # or earliest: where to start when the group has no committed offset
        session_timeout: 10s
        heartbeat_interval: 3s
        max_record_size: 1048576          # bytes; larger records are skipped as poison (>= producer.max_message_bytes)
        commit_interval: 1s               # how often completed offsets are committed
        backoff: 250ms                    # wait before retrying a record the assembly window refused (full)
        auth:
          sasl: {mechanism: PLAIN, username: u, password: p}   # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
          tls: {ca_file: ca.pem, cert_file: c.pem, key_file: k.pem, insecure_skip_verify: false}
"""

from __future__ import annotations

import importlib
import weakref
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client import Counter, Gauge
from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.telemetry import Telemetry

KafkaEncoding = Literal["otlp_proto", "otlp_json"]
ENCODINGS: dict[str, Literal["protobuf", "json"]] = {"otlp_proto": "protobuf", "otlp_json": "json"}


class KafkaTopicConfig(ComponentConfig):
    topic: str = Field(..., min_length=1, description="Topic to consume.")
    encoding: KafkaEncoding = Field("otlp_proto", description="Record value encoding: otlp_proto or otlp_json.")


class KafkaSASLConfig(ComponentConfig):
    mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field("PLAIN", description="SASL mechanism.")
    username: str = Field(..., description="SASL user name.")
    password: str = Field(..., description="SASL password (use `${env:VAR}`).")


class KafkaTLSConfig(ComponentConfig):
    ca_file: str | None = Field(None, description="PEM file of the CA that signed the brokers' certificates.")
    cert_file: str | None = Field(None, description="Client certificate (PEM) for mutual TLS.")
    key_file: str | None = Field(None, description="Client key (PEM) for mutual TLS.")
    insecure_skip_verify: bool = Field(False, description="Do not verify the brokers' certificates (testing only).")

    @model_validator(mode="after")
    def _pair(self) -> KafkaTLSConfig:
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("`cert_file` and `key_file` must be set together")
        return self


class KafkaAuthConfig(ComponentConfig):
    sasl: KafkaSASLConfig | None = Field(None, description="SASL authentication; `null` (default) disables it.")
    tls: KafkaTLSConfig | None = Field(None, description="TLS to the brokers; `null` (default) is plaintext.")


class KafkaReceiverConfig(ComponentConfig):
    brokers: list[str] = Field(["localhost:9092"], min_length=1, description="Bootstrap brokers, host:port.")
    traces: KafkaTopicConfig | None = Field(
        KafkaTopicConfig(topic="otlp_spans"), description="Traces topic; `null` disables it."
    )
    logs: KafkaTopicConfig | None = Field(None, description="Logs topic (e.g. otlp_logs); `null` (default) disables.")
    group_id: str = Field("evald", min_length=1, description="Consumer group; replicas in one group share partitions.")
    client_id: str = Field("evald", description="Client id sent to the brokers.")
    initial_offset: Literal["latest", "earliest"] = Field(
        "latest", description="Where to start when the group has no committed offset."
    )
    session_timeout: Duration = Field(10.0, gt=0, description="A replica silent this long leaves the group.")
    heartbeat_interval: Duration = Field(3.0, gt=0, description="Heartbeats to the group coordinator.")
    max_record_size: int = Field(1024 * 1024, gt=0, description="Largest record value in bytes; larger is poison.")
    commit_interval: Duration = Field(1.0, gt=0, description="How often completed offsets are committed.")
    backoff: Duration = Field(0.25, gt=0, description="Retry delay for a record the window refused (full).")
    auth: KafkaAuthConfig = Field(KafkaAuthConfig(), description="SASL and TLS settings.")

    @model_validator(mode="after")
    def _check(self) -> KafkaReceiverConfig:
        if self.traces is None and self.logs is None:
            raise ValueError("enable at least one of `traces` or `logs`")
        if self.traces is not None and self.logs is not None and self.traces.topic == self.logs.topic:
            raise ValueError("`traces.topic` and `logs.topic` must differ")
        if self.heartbeat_interval >= self.session_timeout:
            raise ValueError("`heartbeat_interval` must be shorter than `session_timeout`")
        return self


@dataclass(frozen=True, slots=True)
class _Metrics:
    records: Counter
    poison: Counter
    commits: Counter
    rebalances: Counter
    paused: Gauge


_METRICS: weakref.WeakKeyDictionary[Telemetry, _Metrics] = weakref.WeakKeyDictionary()


def kafka_metrics(telemetry: Telemetry) -> _Metrics:
    """The Kafka self-metrics on ``telemetry``'s registry (created once per registry)."""
    found = _METRICS.get(telemetry)
    if found is None:
        r = telemetry.registry
        found = _METRICS[telemetry] = _Metrics(
            Counter("evald_kafka_records", "Kafka records consumed.", ["receiver", "topic"], registry=r),
            Counter("evald_kafka_poison_records", "Kafka records skipped as undecodable (poison).",
                    ["receiver", "topic"], registry=r),
            Counter("evald_kafka_commits", "Offset commits, by outcome.", ["receiver", "outcome"], registry=r),
            Counter("evald_kafka_rebalances", "Partitions assigned/revoked events.", ["receiver", "kind"], registry=r),
            Gauge("evald_kafka_paused_partitions", "Partitions paused by backpressure.", ["receiver"], registry=r),
        )
    return found


def consumer_options(config: KafkaReceiverConfig) -> dict[str, Any]:
    """Keyword arguments for ``AIOKafkaConsumer`` (offsets are committed by the receiver, never automatically)."""
    options: dict[str, Any] = {
        "bootstrap_servers": list(config.brokers),
        "group_id": config.group_id,
        "client_id": config.client_id,
        "enable_auto_commit": False,
        "auto_offset_reset": config.initial_offset,
        "session_timeout_ms": int(config.session_timeout * 1000),
        "heartbeat_interval_ms": int(config.heartbeat_interval * 1000),
        "max_partition_fetch_bytes": max(config.max_record_size, 1024 * 1024),
    }
    tls, sasl = config.auth.tls, config.auth.sasl
    if tls is not None:
        helpers = importlib.import_module("aiokafka.helpers")  # untyped: used as Any

        context = helpers.create_ssl_context(cafile=tls.ca_file, certfile=tls.cert_file, keyfile=tls.key_file)
        if tls.insecure_skip_verify:
            import ssl

            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        options["ssl_context"] = context
    if sasl is not None:
        options.update(sasl_mechanism=sasl.mechanism, sasl_plain_username=sasl.username,
                       sasl_plain_password=sasl.password)
    options["security_protocol"] = {
        (False, False): "PLAINTEXT", (True, False): "SSL", (False, True): "SASL_PLAINTEXT", (True, True): "SASL_SSL",
    }[(tls is not None, sasl is not None)]
    return options
