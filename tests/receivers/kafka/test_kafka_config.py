from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.receivers.kafka import KafkaReceiver
from evald.receivers.kafka_config import KafkaReceiverConfig, consumer_options, producer_options
from evald.service import EvaldService


def test_defaults_mirror_the_collector() -> None:
    cfg = KafkaReceiverConfig()
    assert cfg.traces is not None and (cfg.traces.topics, cfg.traces.encoding) == (["otlp_spans"], "otlp_proto")
    assert cfg.logs is None and cfg.initial_offset == "latest" and cfg.group_id == "evald"
    options = consumer_options(cfg)
    assert options["enable_auto_commit"] is False
    assert options["security_protocol"] == "PLAINTEXT"
    assert (options["session_timeout_ms"], options["heartbeat_interval_ms"]) == (10000, 3000)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"traces": None}, "at least one"),
        ({"logs": {"topic": "otlp_spans"}}, "must differ"),
        ({"session_timeout": "1s", "heartbeat_interval": "2s"}, "shorter"),
        ({"traces": {"topic": "t", "encoding": "jaeger_proto"}}, "otlp_json"),
        ({"auth": {"tls": {"cert_file": "c.pem"}}}, "`key_file` is missing"),
        ({"bogus": 1}, "Extra inputs"),
    ],
)
def test_invalid_configs(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        KafkaReceiverConfig.model_validate(raw)


def test_sasl_and_tls_select_the_security_protocol() -> None:
    pytest.importorskip("aiokafka")
    cfg = KafkaReceiverConfig.model_validate(
        {"auth": {"sasl": {"mechanism": "SCRAM-SHA-512", "username": "u", "password": "p"},
                  "tls": {"insecure_skip_verify": True}}}
    )
    options = consumer_options(cfg)
    assert options["security_protocol"] == "SASL_SSL"
    assert (options["sasl_mechanism"], options["sasl_plain_username"]) == ("SCRAM-SHA-512", "u")


async def test_registered_as_a_receiver_type() -> None:
    config = parse_config(
        'receivers:\n  kafka/agents:\n    brokers: ["127.0.0.1:1"]\n'
        "    logs: { topic: otlp_logs, encoding: otlp_json }\n"
    )
    svc = EvaldService(config, with_admin=False, configured_exporters=False)
    (receiver,) = svc.receivers
    assert isinstance(receiver, KafkaReceiver) and receiver.id == "kafka/agents"
    await receiver.shutdown(0.1)  # safe without start


def test_topics_lists_and_the_older_single_topic_form() -> None:
    cfg = KafkaReceiverConfig.model_validate(
        {"traces": {"topics": ["a", "b"]}, "logs": {"topic": "otlp_logs", "encoding": "otlp_json"}}
    )
    assert cfg.topics == {"a": ("traces", cfg.traces), "b": ("traces", cfg.traces), "otlp_logs": ("logs", cfg.logs)}
    assert cfg.logs is not None and cfg.logs.topics == ["otlp_logs"]
    same = KafkaReceiverConfig.model_validate({"traces": {"topic": "x", "topics": ["x"]}})
    assert same.traces is not None and same.traces.topics == ["x"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"traces": {"topic": "a", "topics": ["b"]}}, "either `topic` or `topics`"),
        ({"traces": {"encoding": "otlp_proto"}}, "set `topics`"),
        ({"traces": {"topics": ["^otlp_.*"]}}, "no `\\^` regex"),
        ({"traces": {"topics": ["a", "a"]}}, "twice"),
        ({"traces": {"topics": ["a", "b"]}, "logs": {"topics": ["b"]}}, "must differ"),
        ({"traces": {"topics": ["a"]}, "dead_letter": {"topic": "a"}}, "must not be a consumed topic"),
        ({"dead_letter": {"max_attempts": 0}}, "greater than or equal to 1"),
        ({"dead_letter": {"brokers": []}}, "at least 1 item"),
        ({"dead_letter": {"topic": "d", "bogus": 1}}, "Extra inputs"),
    ],
)
def test_invalid_topic_and_dead_letter_configs(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        KafkaReceiverConfig.model_validate(raw)


def test_dead_letter_producer_options() -> None:
    cfg = KafkaReceiverConfig.model_validate(
        {"brokers": ["k:9092"], "client_id": "c", "dead_letter": {"topic": "dlq", "timeout": "3s"},
         "auth": {"sasl": {"username": "u", "password": "p"}}}
    )
    assert cfg.dead_letter is not None and cfg.dead_letter.brokers is None  # null: the receiver's brokers
    options = producer_options(cfg)
    assert options["bootstrap_servers"] == ["k:9092"] and options["enable_idempotence"] is False
    assert (options["acks"], options["request_timeout_ms"], options["client_id"]) == ("all", 3000, "c")
    assert (options["security_protocol"], options["sasl_plain_username"]) == ("SASL_PLAINTEXT", "u")
    assert "group_id" not in options and "enable_auto_commit" not in options
    other = KafkaReceiverConfig.model_validate({"traces": {"topics": ["a"]},
                                                "dead_letter": {"topic": "a", "brokers": ["dlq:9092"]}})
    assert producer_options(other)["bootstrap_servers"] == ["dlq:9092"]  # same name on other brokers is fine
