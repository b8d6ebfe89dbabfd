from __future__ import annotations

from pathlib import Path

import pytest

from evald.config.loader import default_config_text, load_config, parse_config
from evald.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_embedded_default_config_is_valid() -> None:
    cfg = load_config(None)
    assert set(cfg.receivers) == {"otlp"}
    assert set(cfg.exporters) == {"prometheus"}
    assert cfg.receivers["otlp"].grpc.endpoint.endswith(":4317")  # type: ignore[attr-defined]
    assert cfg.receivers["otlp"].http.endpoint.endswith(":4318")  # type: ignore[attr-defined]
    assert cfg.exporters["prometheus"].endpoint.endswith(":9464")  # type: ignore[attr-defined]
    assert cfg.metrics and "error_free" in {m.kind for m in cfg.metrics}
    assert "receivers:" in default_config_text()


@pytest.mark.parametrize("path", sorted((ROOT / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_config_validates(path: Path) -> None:
    load_config(path, environ={})


def test_every_error_is_reported_with_its_yaml_path() -> None:
    text = """
receivers:
  otlp:
    grpc: { endpoint: "nonsense" }
    bogus: 1
  kafkaa: {}
assembly: { settle: 10s, decision_wait: 1s, num_traces: -3 }
metrics:
  - kind: exact_mach
  - kind: latency
    options: { max_ms: -5, nope: 1 }
  - kind: latency
pipeline: { workers: 0 }
exporters:
  prometheus: { pass_rate_window: "soon" }
"""
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    paths = {p for p, _ in info.value.problems}
    report = info.value.report()
    for expected in (
        "receivers.otlp.grpc.endpoint",
        "receivers.otlp.bogus",
        "receivers.kafkaa",
        "assembly.num_traces",
        "metrics[0].kind",
        "metrics[1].options.max_ms",
        "metrics[1].options.nope",
        "metrics[2].name",
        "pipeline.workers",
        "exporters.prometheus.pass_rate_window",
    ):
        assert expected in paths, f"{expected} missing from:\n{report}"
    assert "exact_match" in report  # close-match suggestion
    assert "duplicate metric name 'latency'" in report


def test_env_interpolation_with_defaults_and_escapes() -> None:
    text = """
receivers:
  otlp:
    grpc: { endpoint: "${env:GRPC_EP}" }
    http: { endpoint: "${HTTP_EP:-127.0.0.1:5318}" }
metrics:
  - kind: regex
    options: { pattern: "cost: $$[0-9]+" }
"""
    cfg = parse_config(text, environ={"GRPC_EP": "127.0.0.1:5317"})
    assert cfg.receivers["otlp"].grpc.endpoint == "127.0.0.1:5317"  # type: ignore[attr-defined]
    assert cfg.receivers["otlp"].http.endpoint == "127.0.0.1:5318"  # type: ignore[attr-defined]
    assert cfg.metrics[0].options["pattern"] == "cost: $[0-9]+"


def test_missing_env_var_is_an_error_with_path() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("exporters:\n  prometheus: { endpoint: '${env:NOPE_NOT_SET}' }\n", environ={})
    assert ("exporters.prometheus.endpoint", "environment variable NOPE_NOT_SET is not set") in info.value.problems


def test_yaml_syntax_error_names_the_line() -> None:
    with pytest.raises(ConfigError, match="line 2"):
        parse_config("receivers:\n  otlp: [unclosed\n", environ={})


def test_null_disables_a_protocol_and_empty_sections_mean_none() -> None:
    cfg = parse_config("receivers:\n  otlp: { http: null }\nexporters: {}\n", environ={})
    assert cfg.receivers["otlp"].http is None  # type: ignore[attr-defined]
    assert cfg.exporters == {}


def test_durations_accept_units() -> None:
    cfg = parse_config("assembly: { settle: 250ms, decision_wait: 2m }\n", environ={})
    assert cfg.root.assembly.settle == 0.25 and cfg.root.assembly.decision_wait == 120
