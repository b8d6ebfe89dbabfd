"""Names multi-case metrics refer to are checked when the config is loaded, with their YAML path."""

from __future__ import annotations

import pytest

from evald.config.loader import parse_config
from evald.errors import ConfigError

HEAD = ("receivers: {}\nexporters: {}\nmetrics:\n  - { kind: exact_match }\n"
        "  - { kind: regex, name: judge, options: { pattern: Paris } }\n")


def problems(metrics: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(HEAD + metrics, environ={})
    return str(info.value)


def test_unknown_references_are_reported_with_their_path() -> None:
    text = problems("  - { kind: composite, options: { weights: { exact_match: 1, nope: 1 } } }\n"
                    "  - { kind: calibration, options: { outcome_metric: exact_matc, confidence_from: metric,"
                    " confidence_metric: judgee } }\n"
                    "  - { kind: prompt_robustness, options: { outcome_metric: missing } }\n")
    assert "metrics[2].options.weights: unknown metric 'nope'" in text
    assert "metrics[3].options.outcome_metric: unknown metric 'exact_matc'" in text
    assert "metrics[3].options.confidence_metric: unknown metric 'judgee'" in text
    assert "metrics[4].options.outcome_metric: unknown metric 'missing'" in text


def test_confidence_from_metric_needs_the_metric() -> None:
    assert "needs `confidence_metric`" in problems("  - { kind: brier_score, options: { confidence_from: metric } }\n")


def test_known_references_and_a_preset_s_default_weights_load() -> None:
    config = parse_config(HEAD + "  - { kind: composite, options: { weights: { exact_match: 1, judge: 2 } } }\n"
                          "  - { kind: discrimination, options: { outcome_metric: exact_match, confidence_from: "
                          "metric, confidence_metric: judge } }\n  - { kind: remediation_quality_index }\n",
                          environ={})
    assert [m.kind for m in config.metrics][-1] == "remediation_quality_index"
