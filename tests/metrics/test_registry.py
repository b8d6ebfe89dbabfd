"""The metric registry's aliases: the seed catalog's names of kinds evald has under another name resolve to that
kind's class (one class, no copy), load from config, and are listed by ``evald list-metrics`` with their kind."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evald.case import EvalCase
from evald.config.loader import parse_config
from evald.metrics.registry import ALIASES, BUILTIN_METRICS, UnknownMetricError, all_metric_classes, get_metric_class
from evald.pipeline.bindings import build_bindings

SEED_NAMES = {"schema_validation": "json_schema", "token_cost": "token_usage",
              "embedding_similarity": "embedding_cosine", "pii": "pii_leak", "tool_use": "tool_use_quality"}


@pytest.mark.parametrize(("alias", "kind"), sorted(SEED_NAMES.items()))
def test_an_alias_resolves_to_its_kinds_class(alias: str, kind: str) -> None:
    assert ALIASES[alias] == kind and alias not in BUILTIN_METRICS
    assert get_metric_class(alias) is get_metric_class(kind)


def test_classes_are_listed_once() -> None:
    classes = all_metric_classes()
    assert len(classes) == len(set(classes))


def test_an_alias_in_config_scores_like_its_kind() -> None:
    config = parse_config("receivers: {}\nexporters: {}\nmetrics:\n  - { kind: pii }\n  - { kind: pii, name: pii }\n",
                          environ={})
    unnamed, named = (b.metric for b in build_bindings(list(config.metrics)))
    case = EvalCase(input="q", output="Write to jane.doe@example.com")
    assert (unnamed.name, named.name) == ("pii_leak", "pii")
    first, second = unnamed.measure(case), named.measure(case)
    assert first is not None and second is not None
    assert first.value == second.value == get_metric_class("pii_leak")().measure(case).value  # type: ignore[union-attr]
    assert not first.passed


def test_a_near_miss_suggests_the_alias() -> None:
    with pytest.raises(UnknownMetricError, match="token_cost"):
        get_metric_class("token_costs")


def test_list_metrics_lists_each_alias_with_its_kind() -> None:
    out = subprocess.run([sys.executable, "-m", "evald", "list-metrics", "--format", "json"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    rows = {row["kind"]: row for row in json.loads(out)}
    for alias, kind in SEED_NAMES.items():
        assert rows[alias]["alias_of"] == kind and rows[alias]["summary"] == f"alias of {kind}"
        assert rows[alias]["dimension"] == rows[kind]["dimension"]
        assert "alias_of" not in rows[kind]
