"""The Grafana dashboard: rendered from its script, shipped twice identically, and every query names real series.

The series check scrapes a live `evald run` (with a judge and a langfuse exporter configured, so their series are
registered) and compares every `evald_*` name in every panel query and variable with what /metrics exposes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.daemon import Daemon

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_COPY = ROOT / "deploy" / "grafana" / "dashboards" / "evald.json"
CHART_COPY = ROOT / "helm" / "evald" / "dashboards" / "evald.json"
SERIES = re.compile(r"\bevald_[a-z0-9_]+")
SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")
# Series the dashboard queries that the live scrape below cannot show, because they exist only with a component the
# test does not start: name -> the module that defines it (checked by grepping evald/ for the name).
ONLY_WITH: dict[str, str] = {
    "evald_kafka_consumer_lag": "evald/receivers/kafka*.py: only with a `kafka` receiver (mode kafka-scorer)",
}


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DEPLOY_COPY.read_text(encoding="utf-8"))
    return data


def queries(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    return exprs


def test_both_copies_are_the_rendered_dashboard() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_dashboard", ROOT / "deploy/grafana/render_dashboard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    assert DEPLOY_COPY.read_text(encoding="utf-8") == expected, "run python deploy/grafana/render_dashboard.py"
    assert CHART_COPY.read_text(encoding="utf-8") == expected


def test_dashboard_structure() -> None:
    dashboard = load()
    assert dashboard["uid"] and dashboard["title"] and dashboard["panels"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for p in dashboard["panels"]:
        assert p["datasource"]["uid"] == "${datasource}" and p["targets"]
        assert {"x", "y", "w", "h"} <= set(p["gridPos"]) and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
        assert len({t["refId"] for t in p["targets"]}) == len(p["targets"])
    # the score histogram panel asks Grafana for exemplars (links from a bucket to the trace)
    targets = [t for p in dashboard["panels"] for t in p["targets"]]
    assert any(t.get("exemplar") for t in targets if "evald_score_bucket" in t["expr"])


@pytest.mark.integration
def test_every_query_uses_series_evald_exposes(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, "")
    daemon.config_path.write_text(f"""
receivers:
  otlp: {{ grpc: {{ endpoint: "127.0.0.1:{daemon.grpc_port}" }}, http: {{ endpoint: "127.0.0.1:{daemon.http_port}" }} }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: "sk-test", base_url: "http://127.0.0.1:9/v1",
             daily_budget_usd: 5, coordination: {{ redis: {{ url: "redis://127.0.0.1:9/0" }} }} }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{daemon.metrics_port}" }}
  langfuse: {{ host: "http://127.0.0.1:9", public_key: pk, secret_key: sk }}
metrics:
  - {{ kind: error_free, scope: all }}
  - {{ kind: answer_relevancy, options: {{ judge: default }} }}
""")
    with daemon:
        exposed = {family.name for family in text_string_to_metric_families(daemon.scrape())}
    names = {name for expr in queries(load()) for name in SERIES.findall(expr)}
    assert names
    missing = sorted(n for n in names if n not in exposed and not any(
        n.endswith(s) and n[: -len(s)] in exposed for s in SUFFIXES))
    assert not set(ONLY_WITH) & exposed, "a series in ONLY_WITH is exposed by the scrape: drop it from the list"
    assert set(missing) == set(ONLY_WITH) & names, f"dashboard queries series evald does not expose: {missing}"


def test_series_only_exposed_with_other_components_are_defined_in_evald() -> None:
    sources = {p: p.read_text(encoding="utf-8") for p in (ROOT / "evald").rglob("*.py")}
    for name, where in ONLY_WITH.items():
        defined_in = sorted(str(p.relative_to(ROOT)) for p, text in sources.items() if f'"{name}"' in text)
        assert defined_in, f"{name} ({where}) is not defined anywhere in evald/"


def test_judge_kafka_and_skip_panels() -> None:
    exprs = " ".join(queries(load()))
    for series in ("evald_judge_cost_usd_total", "evald_judge_budget_remaining_usd",
                   "evald_judge_budget_remaining_tokens", "evald_judge_requests_total",
                   "evald_judge_cache_requests_total{result=\"hit\"}", "evald_metric_skips_total",
                   "evald_kafka_consumer_lag"):
        assert series in exprs, series
    assert "by (judge, window)" in exprs and "by (topic, partition)" in exprs and "by (metric, reason)" in exprs
