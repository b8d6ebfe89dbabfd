"""Links into the explorer from where users look: the Grafana dashboard's data links and the PrometheusRule's
`explorer_url` annotation (chart value `explorer.externalUrl`), checked against what the explorer parses; the
annotation rendered by promtool from a firing alert."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from evald.explorer.views import BASE, Filters

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "evald.json"
EXTERNAL = "https://evald.example.internal/"
# What Grafana substitutes in a data link for one series of the pass-rate panel
GRAFANA = {"${explorer_url}": "http://localhost:9464", "${__field.labels.metric}": "faithfulness",
           "${__field.labels.service_name}": "checkout", "${__from:date:iso}": "2026-11-26T12:00:00.000Z",
           "${__to:date:iso}": "2026-11-26T18:00:00.000Z"}


def render(values: dict[str, Any]) -> dict[str, str]:
    import helm_python

    chart = helm_python.Chart.load(str(ROOT / "helm" / "evald"))
    try:
        rendered: dict[str, str] = chart.render(values, name="evald", namespace="observability")
    finally:
        chart.close()
    return rendered


def test_dashboard_data_links_open_the_explorer_filtered_by_metric_and_service() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "explorer_url")
    assert variable["type"] == "textbox" and variable["query"] == "http://localhost:9464"
    linked = {p["title"]: p["fieldConfig"]["defaults"].get("links", []) for p in dashboard["panels"]}
    outcomes = set()
    for title in ("Pass rate by metric (quality dimensions)", "Safety pass rate (never averaged with quality)",
                  "Evaluations per second by outcome", "Pass rate against evald's own baseline",
                  "Regressions flagged by evald (alert EvaldPassRateBelowBaseline)"):
        assert linked[title], f"{title}: no data link"
        for link in linked[title]:
            url = link["url"]
            for name, value in GRAFANA.items():
                url = url.replace(name, value)
            assert "${" not in url, url
            parts = urlsplit(url)
            assert parts.path == BASE
            filters = Filters.parse(dict(parse_qsl(parts.query)))
            assert (filters.metric, filters.service) == ("faithfulness", "checkout")
            assert filters.since is not None and filters.until is not None and filters.since < filters.until
            outcomes.add(filters.outcome)
    assert outcomes == {"fail", None}  # the failing cases, and all recent evaluations
    # the series behind the links keep the labels the links read (no aggregation drops them)
    for panel in dashboard["panels"]:
        if panel["fieldConfig"]["defaults"].get("links"):
            for target in panel["targets"]:
                for by in target["expr"].split("by (")[1:]:
                    assert {"metric", "service_name"} <= {x.strip() for x in by.split(")")[0].split(",")}, by


def test_chart_sets_the_dashboard_explorer_url() -> None:
    pytest.importorskip("helm_python")
    rendered = render({"grafanaDashboard": {"enabled": True}, "explorer": {"externalUrl": EXTERNAL}})
    configmap = yaml.safe_load(rendered["evald/templates/dashboard-configmap.yaml"])
    dashboard = json.loads(configmap["data"]["evald.json"])
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "explorer_url")
    assert variable["query"] == variable["current"]["value"] == EXTERNAL.rstrip("/")
    plain = render({"grafanaDashboard": {"enabled": True}})["evald/templates/dashboard-configmap.yaml"]
    default = yaml.safe_load(plain)
    assert default["data"]["evald.json"] == DASHBOARD.read_text(encoding="utf-8").rstrip("\n")


def rule_groups(external: str | None) -> list[dict[str, Any]]:
    values: dict[str, Any] = {"prometheusRule": {"enabled": True}}
    if external is not None:
        values["explorer"] = {"externalUrl": external}
    groups: list[dict[str, Any]] = yaml.safe_load(render(values)["evald/templates/prometheusrule.yaml"])["spec"][
        "groups"]
    return groups


def test_alert_annotations_carry_the_explorer_url_only_when_configured() -> None:
    pytest.importorskip("helm_python")
    with_url = {r["alert"]: r["annotations"] for g in rule_groups(EXTERNAL) for r in g["rules"]}
    carrying = {name for name, annotations in with_url.items() if "explorer_url" in annotations}
    assert carrying == {"EvaldPassRateRegression", "EvaldPassRateBelowBaseline", "EvaldSafetyFailures"}
    assert with_url["EvaldSafetyFailures"]["explorer_url"] == (
        "https://evald.example.internal/debug/evaluations?metric={{ $labels.metric | urlquery }}"
        "&service={{ $labels.service_name | urlquery }}&outcome=fail")
    assert not any("explorer_url" in r["annotations"] for g in rule_groups(None) for r in g["rules"])


@pytest.mark.integration
def test_promtool_renders_the_explorer_url_of_a_firing_alert(tmp_path: Path) -> None:
    pytest.importorskip("helm_python")
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is needed (Debian package `prometheus`)"
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups(EXTERNAL)}), encoding="utf-8")
    labels = {"metric": "faithfulness", "dimension": "quality", "scope": "trace", "service_name": "chat bot",
              "model": "gpt-4o"}
    selector = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    url = ("https://evald.example.internal/debug/evaluations?metric=faithfulness&service=chat+bot&outcome=fail")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": f"evald_pass_rate_ratio{{{selector}}}", "values": "0.5x30"},
                         {"series": f"evald_pass_rate_regression{{{selector}}}", "values": "1x30"}],
        "alert_rule_test": [{"eval_time": "20m", "alertname": "EvaldPassRateBelowBaseline", "exp_alerts": [{
            "exp_labels": {**labels, "severity": "warning", "baseline": "in-daemon"},
            "exp_annotations": {**next(r["annotations"] for g in rule_groups(EXTERNAL) for r in g["rules"]
                                       if r["alert"] == "EvaldPassRateBelowBaseline"), "explorer_url": url,
                                "summary": "Pass rate of evald metric faithfulness (quality) is below evald's own "
                                           "baseline.",
                                "description": 'evald flags the pass rate of faithfulness (dimension quality, scope '
                                               'trace) for service "chat bot", model "gpt-4o", now 50%, as more than '
                                               "regression_margin below its baseline over baseline_window "
                                               "(evald_pass_rate_regression == 1), for 15m."},
        }]}],
    }]}
    (tmp_path / "rules.test.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    result = subprocess.run([promtool, "test", "rules", "rules.test.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    filters = Filters.parse(dict(parse_qsl(urlsplit(url).query)))
    assert (filters.metric, filters.service, filters.outcome) == ("faithfulness", "chat bot", "fail")
