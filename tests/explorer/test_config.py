"""The explorer's config: on by default on the admin port, the receivers' auth reused, templates validated,
disabled or separate endpoints wired by the service."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.explorer.config import ExplorerConfig, receiver_auth
from evald.service import EvaldService
from evald.telemetry import Telemetry

AUTH = """
receivers:
  otlp:
    grpc: null
    http: { endpoint: "127.0.0.1:0", auth: { bearer_tokens: ["tok-123"] } }
"""


def test_on_by_default_with_the_receivers_auth() -> None:
    config = parse_config(AUTH + "metrics: [{ kind: error_free }]\n", "t", environ={})
    assert config.root.explorer.enabled and config.root.explorer.endpoint is None
    auth = receiver_auth(config.receivers)
    assert auth is not None and [t.get_secret_value() for t in auth.bearer_tokens] == ["tok-123"]
    service = EvaldService(config, Telemetry(), with_receivers=False)
    assert service.explorer is not None and service.explorer.auth is not None
    assert service.explorer.exporter in service.exporters
    assert service.admin._routes == service.explorer.register


def test_no_auth_without_receiver_auth_and_disabled_explorer() -> None:
    config = parse_config("metrics: [{ kind: error_free }]\nexplorer: { enabled: false }\n", "t", environ={})
    assert receiver_auth(config.receivers) is None
    service = EvaldService(config, Telemetry(), with_receivers=False)
    assert service.explorer is None and service.admin._routes is None
    assert not any(e.id == "explorer" for e in service.exporters)


def test_separate_endpoint_leaves_the_admin_port_alone() -> None:
    config = parse_config("metrics: [{ kind: error_free }]\nexplorer: { endpoint: '127.0.0.1:0' }\n", "t",
                          environ={})
    service = EvaldService(config, Telemetry(), with_receivers=False)
    assert service.admin._routes is None and service.explorer.server is not None


@pytest.mark.parametrize(("template", "message"), [
    ("https://tempo.example/trace/", "{trace_id}"),
    ("javascript:alert('{trace_id}')", "http(s)"),
])
def test_trace_url_template_is_validated(template: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ExplorerConfig(trace_url_template=template)
