"""Config model, consumer options and self-metrics of the ``kafka`` receiver.

Config keys (``receivers: kafka[/<name>]:``), mirroring the Collector's ``kafkareceiver``::

    receivers:
      kafka:
        brokers: [localhost:9092]
        traces: {topics: [otlp_spans], encoding: otlp_proto}  # otlp_proto | otlp_json; null disables
        logs: null                                 # e.g. {topics: [otlp_logs], encoding: otlp_proto}
        # `topic: x` (one topic, the older Collector form) is still accepted and means `topics: [x]`
        group_id: evald                   # client_id: evald as well
        initial_offset: latest            # or earliest: where to start when the group has no committed offset
        session_timeout: 10s
        heartbeat_interval: 3s
        max_record_size: 1048576          # bytes; larger records are skipped as poison (>= producer.max_message_bytes)
        commit_interval: 1s               # how often completed offsets are committed
        backoff: 250ms                    # wait before retrying a record the assembly window refused (full)
        dead_letter: null                 # e.g. {topic: otlp_spans_dlq, brokers: null}; see kafka_dlq.py
        auth:
          sasl: {mechanism: PLAIN, username: u, password: p}   # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
          tls: {ca_file: ca.pem, cert_file: c.pem, key_file: k.pem}  # the Collector's configtls client keys:
          # ca_pem, cert_pem, key_pem, insecure (plaintext), insecure_skip_verify, server_name_override,
          # min_version, max_version, reload_interval (evald/config/tls_client.py)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.config.tls_client import ClientTLSConfig
from evald.receivers.kafka_dlq import DeadLetterConfig
from evald.receivers.kafka_logs import quiet_aiokafka_logs
from evald.telemetry import Telemetry, shared_instruments

KafkaEncoding = Literal["otlp_proto", "otlp_json"]
ENCODINGS: dict[str, Literal["protobuf", "json"]] = {"otlp_proto": "protobuf", "otlp_json": "json"}


class KafkaTopicConfig(ComponentConfig):
    topics: list[str] = Field([], description="Topics to consume (literal names; `^` regexes are not supported).")
    topic: str | None = Field(None, min_length=1, description="One topic: the older form of `topics: [topic]`.")
    encoding: KafkaEncoding = Field("otlp_proto", description="Record value encoding: otlp_proto or otlp_json.")

    @model_validator(mode="before")
    @classmethod
    def _merge(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("topic") is not None:
            if data.get("topics") and list(data["topics"]) != [data["topic"]]:
                raise ValueError("set either `topic` or `topics`, not both")
            data = {**data, "topics": [data["topic"]]}
        return data

    @model_validator(mode="after")
    def _check(self) -> KafkaTopicConfig:
        if not self.topics:
            raise ValueError("set `topics` (a list of topic names)")
        for name in self.topics:
            if not name or name.startswith("^"):
                raise ValueError(f"topic {name!r}: topic names must be literal and non-empty (no `^` regex)")
        if len(set(self.topics)) != len(self.topics):
            raise ValueError("`topics` lists a topic twice")
        return self


class KafkaSASLConfig(ComponentConfig):
    mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field("PLAIN", description="SASL mechanism.")
    username: str = Field(..., description="SASL user name.")
    password: str = Field(..., description="SASL password (use `${env:VAR}`).")


class KafkaAuthConfig(ComponentConfig):
    sasl: KafkaSASLConfig | None = Field(None, description="SASL authentication; `null` (default) disables it.")
    tls: ClientTLSConfig | None = Field(
        None, description="TLS to the brokers (the Collector's configtls client keys); `null` (default) or "
        "`insecure: true` is plaintext."
    )


class KafkaReceiverConfig(ComponentConfig):
    brokers: list[str] = Field(["localhost:9092"], min_length=1, description="Bootstrap brokers, host:port.")
    traces: KafkaTopicConfig | None = Field(
        KafkaTopicConfig(topics=["otlp_spans"]), description="Traces topics; `null` disables them."
    )
    logs: KafkaTopicConfig | None = Field(None, description="Logs topics (e.g. otlp_logs); `null` (default) disables.")
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
    dead_letter: DeadLetterConfig | None = Field(
        None, description="Copy poison records to a dead-letter topic before skipping them; `null` (default) is off."
    )

    @model_validator(mode="after")
    def _check(self) -> KafkaReceiverConfig:
        if self.traces is None and self.logs is None:
            raise ValueError("enable at least one of `traces` or `logs`")
        if self.traces is not None and self.logs is not None and set(self.traces.topics) & set(self.logs.topics):
            raise ValueError("`traces.topics` and `logs.topics` must differ")
        if self.dead_letter is not None and self.dead_letter.brokers is None and self.dead_letter.topic in self.topics:
            raise ValueError("`dead_letter.topic` must not be a consumed topic")
        if self.heartbeat_interval >= self.session_timeout:
            raise ValueError("`heartbeat_interval` must be shorter than `session_timeout`")
        return self

    @property
    def topics(self) -> dict[str, tuple[Literal["traces", "logs"], KafkaTopicConfig]]:
        """Every consumed topic -> (signal, its topic config)."""
        out: dict[str, tuple[Literal["traces", "logs"], KafkaTopicConfig]] = {}
        for signal, cfg in (("traces", self.traces), ("logs", self.logs)):
            for name in cfg.topics if cfg is not None else ():
                out[name] = (signal, cfg)  # type: ignore[assignment]
        return out


@dataclass(frozen=True, slots=True)
class _Metrics:
    records: Counter
    poison: Counter
    commits: Counter
    rebalances: Counter
    paused: Gauge
    lag: Gauge
    assigned: Gauge
    dead_letter: Counter


def kafka_metrics(telemetry: Telemetry) -> _Metrics:
    """The Kafka self-metrics on ``telemetry``'s registry (created once per registry)."""
    return shared_instruments(telemetry.registry, _build_metrics)


def _build_metrics(r: CollectorRegistry) -> _Metrics:
    return _Metrics(
        Counter("evald_kafka_records", "Kafka records consumed.", ["receiver", "topic"], registry=r),
        Counter("evald_kafka_poison_records", "Kafka records skipped as undecodable (poison).",
                ["receiver", "topic"], registry=r),
        Counter("evald_kafka_commits", "Offset commits, by outcome.", ["receiver", "outcome"], registry=r),
        Counter("evald_kafka_rebalances", "Partitions assigned/revoked events.", ["receiver", "kind"], registry=r),
        Gauge("evald_kafka_paused_partitions", "Partitions paused by backpressure.", ["receiver"], registry=r),
        Gauge("evald_kafka_consumer_lag", "Records behind: high watermark minus the group's committed offset.",
              ["receiver", "topic", "partition"], registry=r),
        Gauge("evald_kafka_assigned_partitions", "Partitions assigned to this replica.", ["receiver"], registry=r),
        Counter("evald_kafka_dead_letter", "Poison records copied to the dead-letter topic, by outcome.",
                ["receiver", "outcome"], registry=r),
    )


def producer_options(config: KafkaReceiverConfig) -> dict[str, Any]:
    """Keyword arguments for the dead-letter ``AIOKafkaProducer``: the receiver's auth, not idempotent (tansu and
    some brokers do not support it), ``acks=all``."""
    dlq = config.dead_letter
    brokers = config.brokers if dlq is None or dlq.brokers is None else dlq.brokers
    timeout_ms = int((dlq.timeout if dlq is not None else 10.0) * 1000)
    return {**security_options(config.auth), "client_id": config.client_id, "bootstrap_servers": list(brokers),
            "enable_idempotence": False, "acks": "all", "request_timeout_ms": timeout_ms,
            "max_request_size": max(config.max_record_size, 1024 * 1024) + 65536}


def consumer_options(config: KafkaReceiverConfig) -> dict[str, Any]:
    """Keyword arguments for ``AIOKafkaConsumer`` (offsets are committed by the receiver, never automatically)."""
    return {
        **security_options(config.auth),
        "bootstrap_servers": list(config.brokers),
        "group_id": config.group_id,
        "client_id": config.client_id,
        "enable_auto_commit": False,
        "auto_offset_reset": config.initial_offset,
        "session_timeout_ms": int(config.session_timeout * 1000),
        "heartbeat_interval_ms": int(config.heartbeat_interval * 1000),
        "max_partition_fetch_bytes": max(config.max_record_size, 1024 * 1024),
    }


def security_options(auth: KafkaAuthConfig) -> dict[str, Any]:
    """The TLS/SASL keyword arguments of any aiokafka client (consumer, dead-letter and ingest producers).

    Every aiokafka client of evald is built from these options, so this also rate-limits aiokafka's own log lines
    (kafka_logs.py): a broker outage would otherwise log dozens of ERROR lines per second."""
    quiet_aiokafka_logs()
    options: dict[str, Any] = {}
    sasl = auth.sasl
    tls = auth.tls if auth.tls is not None and not auth.tls.insecure else None
    if tls is not None:
        from evald.config.tls_client_context import client_ssl_context

        # server_name_override and reload_interval live in the context's wrap_bio, which aiokafka's asyncio
        # connections call for every new broker connection
        options["ssl_context"] = client_ssl_context(tls)
    if sasl is not None:
        options.update(sasl_mechanism=sasl.mechanism, sasl_plain_username=sasl.username,
                       sasl_plain_password=sasl.password)
    options["security_protocol"] = {
        (False, False): "PLAINTEXT", (True, False): "SSL", (False, True): "SASL_PLAINTEXT", (True, True): "SASL_SSL",
    }[(tls is not None, sasl is not None)]
    return options
