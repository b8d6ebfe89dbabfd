from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.interfaces import Source
from evald.receivers.otlp import OTLPReceiverConfig, build_otlp_receivers
from evald.telemetry import Telemetry
from tests.receivers.support import RecordingConsumer


def test_defaults_enable_both_protocols() -> None:
    cfg = OTLPReceiverConfig.model_validate({})
    assert cfg.grpc is not None and cfg.grpc.endpoint == "0.0.0.0:4317" and cfg.grpc.max_recv_msg_size_mib == 16
    assert cfg.http is not None and cfg.http.endpoint == "0.0.0.0:4318"
    assert cfg.http.max_request_body_size == 16 * 1024 * 1024  # 16 MiB after decompression, as OTLP asks


def test_collector_style_blocks_and_null_disables() -> None:
    cfg = OTLPReceiverConfig.model_validate({"grpc": {"endpoint": "127.0.0.1:5317"}, "http": None})
    assert cfg.grpc is not None and cfg.grpc.endpoint == "127.0.0.1:5317" and cfg.http is None
    cfg = OTLPReceiverConfig.model_validate({"grpc": {}, "http": {"endpoint": "localhost:0"}})
    assert cfg.grpc is not None and cfg.grpc.endpoint == "0.0.0.0:4317"


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"grpc": None, "http": None}, "at least one protocol"),
        ({"grpc": {"endpoint": "nonsense"}}, "host:port"),
        ({"grpc": {"max_recv_msg_size_mib": 0}}, "greater than 0"),
        ({"http": {"max_request_body_size": -1}}, "greater than 0"),
        ({"http": {"cors": {}}}, "Extra inputs"),
        ({"protocols": {}}, "Extra inputs"),
    ],
)
def test_invalid_configs(raw: dict[str, object], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        OTLPReceiverConfig.model_validate(raw)


async def test_build_creates_one_source_per_protocol_and_they_run() -> None:
    cfg = OTLPReceiverConfig.model_validate({"grpc": {"endpoint": "127.0.0.1:0"}, "http": {"endpoint": "127.0.0.1:0"}})
    receivers = build_otlp_receivers(cfg, Telemetry(), component_id="otlp/edge")
    assert [r.id for r in receivers] == ["otlp/edge/grpc", "otlp/edge/http"]
    assert all(isinstance(r, Source) for r in receivers)
    try:
        for receiver in receivers:
            await receiver.start(RecordingConsumer())
        assert all(getattr(r, "bound_port", 0) for r in receivers)
    finally:
        for receiver in receivers:
            await receiver.shutdown(1.0)
    only_http = build_otlp_receivers(OTLPReceiverConfig.model_validate({"grpc": None}), Telemetry())
    assert [r.id for r in only_http] == ["otlp/http"]
