from __future__ import annotations

from pathlib import Path

import pytest

from evald.config.loader import (
    default_config_text,
    default_metric_blocks,
    load_config,
    parse_config,
    scoring_problems,
)
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


def test_missing_env_var_is_one_problem_at_its_path() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("exporters:\n  prometheus: { endpoint: '${env:NOPE_NOT_SET}' }\n", environ={})
    # the empty value left in its place is not also reported as an invalid endpoint
    assert info.value.problems == [("exporters.prometheus.endpoint", "environment variable NOPE_NOT_SET is not set")]


def test_missing_env_vars_do_not_hide_other_problems() -> None:
    text = """
pipeline: { workers: "${env:WORKERS}", queue_size: 0 }
receivers:
  otlp: { grpc: { endpoint: "${env:GRPC}" } }
"""
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    problems = info.value.problems
    assert ("pipeline.workers", "environment variable WORKERS is not set") in problems
    assert ("receivers.otlp.grpc.endpoint", "environment variable GRPC is not set") in problems
    assert [path for path, _ in problems].count("pipeline.queue_size") == 1  # a real problem beside them
    assert len(problems) == 3, info.value.report()


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


def test_a_config_without_metrics_gets_the_default_metric_set() -> None:
    default = parse_config(default_config_text(), environ={})
    cfg = parse_config("receivers: {}\nexporters: {}\n", environ={})
    assert cfg.default_metrics and not default.default_metrics
    assert cfg.metrics == default.metrics and cfg.root.metrics == default.root.metrics
    assert [spec.kind for spec in cfg.metrics] == [block["kind"] for block in default_metric_blocks()]
    assert scoring_problems(cfg, "all") == []


def test_an_empty_metric_list_is_refused_by_the_roles_that_score() -> None:
    cfg = parse_config("metrics: []\n", environ={})
    assert cfg.metrics == [] and not cfg.default_metrics
    kinds = ", ".join(block["kind"] for block in default_metric_blocks())
    for role in ("all", "score"):
        ((path, message),) = scoring_problems(cfg, role)
        assert path == "metrics" and f"evaluates nothing in role `{role}`" in message and kinds in message
    assert scoring_problems(cfg, "ingest") == []  # the ingest role does not score


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n# and another\n", "---\n"])
def test_an_empty_config_file_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "evald.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    ((where, message),) = info.value.problems
    assert where == "" and message.startswith(f"{path} is empty")


def test_an_explicit_empty_mapping_is_the_defaults() -> None:
    cfg = parse_config("{}", environ={})
    assert set(cfg.receivers) == {"otlp"} and cfg.default_metrics


def test_unknown_keys_get_the_nearest_allowed_key() -> None:
    text = """
metricz: []
telemetry: { logs: { levl: debug } }
receivers:
  otlp: { grpc: { endpont: "127.0.0.1:0" } }
  otlpp: {}
exporters:
  prometheus: { pass_rate_windows: 5m }
judges: { default: { provider: openai, model: gpt-4o-mini, timout: 3s } }
metrics:
  - { kind: latency, optionz: { max_ms: 1 } }
  - { kind: latency, name: l2, options: { max_mss: 1, max_ms: 1 } }
pipelines: [{ exporters: [prometheus], filter: { scop: [trace], colour: red } }]
"""
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    problems = dict(info.value.problems)
    report = info.value.report()
    expected = {
        "metricz": "'metrics'",
        "telemetry.logs.levl": "'level'",
        "receivers.otlp.grpc.endpont": "'endpoint'",
        "exporters.prometheus.pass_rate_windows": "'pass_rate_window'",
        "judges.default.timout": "'timeout'",
        "metrics[0].optionz": "'options'",
        "metrics[1].options.max_mss": "'max_ms'",
        "pipelines[0].filter.scop": "'scope'",
    }
    for path, suggestion in expected.items():
        assert problems.get(path, "").startswith("unknown key (not allowed here); did you mean "), (path, report)
        assert suggestion in problems[path], (path, report)
    assert problems["pipelines[0].filter.colour"] == "unknown key (not allowed here)"  # nothing near: no guess
    assert problems["receivers.otlpp"].startswith("unknown receiver type 'otlpp'; did you mean 'otlp'?")


def test_an_unknown_metric_kind_lists_only_the_nearest_kinds() -> None:
    from evald.metrics.registry import known_kinds

    text = "metrics:\n  - kind: tool_call\n  - kind: latncy\n  - kind: zzzzqqq\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    problems = dict(info.value.problems)
    count = len(known_kinds())
    assert count > 20
    near = problems["metrics[0].kind"]
    assert near.startswith("unknown metric kind 'tool_call'; did you mean 'tool_call")
    assert "'tool_called'" in near and f"`evald list-metrics` lists all {count}" in near
    assert problems["metrics[1].kind"].startswith("unknown metric kind 'latncy'; did you mean 'latency'")  # first
    assert problems["metrics[2].kind"].startswith("unknown metric kind 'zzzzqqq'; no known kind is close")
    for message in problems.values():
        named = [kind for kind in known_kinds() if f"'{kind}'" in message]
        assert len(named) <= 3, message  # not every kind
