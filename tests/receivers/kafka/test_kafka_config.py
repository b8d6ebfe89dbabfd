from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.receivers.kafka import KafkaReceiver
from evald.receivers.kafka_config import KafkaReceiverConfig, consumer_options
from evald.service import EvaldService


def test_defaults_mirror_the_collector() -> None:
    cfg = KafkaReceiverConfig()
    assert cfg.traces is not None and (cfg.traces.topic, cfg.traces.encoding) == ("otlp_spans", "otlp_proto")
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
        ({"auth": {"tls": {"cert_file": "c.pem"}}}, "together"),
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
