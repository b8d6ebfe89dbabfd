"""evald's regression alerts: the chart's PrometheusRule and the plain rules file hold the same rules, promtool
checks them and its unit tests (deploy/prometheus/tests/) make each alert fire on a regression and stay quiet on a
healthy series, and every alert has a runbook entry.

Regenerate the plain file after changing the rules in the chart: python3 tests/deploy/test_alert_rules.py --write
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = ROOT / "helm" / "evald"
RULES_FILE = ROOT / "deploy" / "prometheus" / "evald-alerts.yaml"
# promtool unit tests; the 7-day baseline's are apart for their coarser evaluation interval
RULES_TESTS = sorted((ROOT / "deploy" / "prometheus" / "tests").glob("*.test.yaml"))
RUNBOOK = ROOT / "docs" / "runbook.md"
RULE_TEMPLATE = "evald/templates/prometheusrule.yaml"
RULES_HEADER = """\
# evald's regression alerts as a plain Prometheus rules file, for Prometheus without the Operator:
#   rule_files: [/etc/prometheus/evald-alerts.yaml]
# The same rules as the Helm chart's PrometheusRule (helm/evald, prometheusRule.enabled=true) with its default values;
# tests/deploy/test_alert_rules.py fails when the two differ. Change thresholds in helm/evald/templates/_alerts.tpl
# and helm/evald/values.yaml, then regenerate this file: python3 tests/deploy/test_alert_rules.py --write
# Runbook for every alert: docs/runbook.md. Unit tests: deploy/prometheus/tests/*.test.yaml.
"""
ALERTS = {
    "EvaldPassRateRegression",
    "EvaldPassRateBelowBaseline",
    "EvaldSafetyFailures",
    "EvaldReceiverRefusingSpans",
    "EvaldAssemblyDroppingSpans",
    "EvaldExporterSendFailures",
    "EvaldExporterDroppingScores",
    "EvaldUnauthenticatedRequests",
    "EvaldKafkaLagGrowing",
    "EvaldJudgeErrorRate",
    "EvaldJudgeBudgetExhausted",
    "EvaldJudgeCircuitOpen",
}


def render_rule(values: dict[str, Any] | None = None) -> str:
    import helm_python

    chart = helm_python.Chart.load(str(CHART_DIR))
    try:
        merged = {"prometheusRule": {"enabled": True, **(values or {})}}
        text: str = chart.render(copy.deepcopy(merged), name="evald", namespace="observability")[RULE_TEMPLATE]
    finally:
        chart.close()
    return text


def rendered_groups(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = yaml.safe_load(render_rule(values))["spec"]["groups"]
    return groups


def plain_rules_text() -> str:
    """The rules file's text as generated from the chart's PrometheusRule with the default values."""
    body = render_rule().split("spec:\n  groups:\n", 1)[1]
    lines = [line.removeprefix("    ") for line in body.splitlines()]
    return RULES_HEADER + "groups:\n" + "\n".join(lines).rstrip() + "\n"


def rules(groups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rules by alert name, plus `[baseline]` for the pass-rate rules (one per baseline)."""
    out: dict[str, dict[str, Any]] = {}
    for group in groups:
        for rule in group["rules"]:
            baseline = rule["labels"].get("baseline")
            key = f"{rule['alert']}[{baseline}]" if baseline else rule["alert"]
            assert key not in out, f"two rules {key}"
            out[key] = rule
    return out


def alert_names(groups: list[dict[str, Any]]) -> set[str]:
    return {r["alert"] for g in groups for r in g["rules"]}


@pytest.fixture(scope="module")
def plain() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))
    return doc


# --- the chart and the plain file ---------------------------------------------------------------------------------


def test_plain_rules_file_is_the_charts_prometheus_rule(plain: dict[str, Any]) -> None:
    pytest.importorskip("helm_python")
    assert set(plain) == {"groups"}
    assert plain["groups"] == rendered_groups(), (
        "deploy/prometheus/evald-alerts.yaml differs from the chart's PrometheusRule; regenerate it with "
        "python3 tests/deploy/test_alert_rules.py --write"
    )
    assert RULES_FILE.read_text(encoding="utf-8") == plain_rules_text()


def test_the_expected_alerts(plain: dict[str, Any]) -> None:
    assert alert_names(plain["groups"]) == ALERTS
    assert {"EvaldPassRateRegression[1d]", "EvaldPassRateRegression[7d]"} <= set(rules(plain["groups"]))


@pytest.mark.parametrize("baseline", ["1d", "7d"])
def test_pass_rate_compares_with_its_own_value_at_the_baseline(plain: dict[str, Any], baseline: str) -> None:
    expr = rules(plain["groups"])[f"EvaldPassRateRegression[{baseline}]"]["expr"]
    assert expr.count('evald_evaluations_total{outcome="pass"}[30m]') == 2
    assert expr.count('evald_evaluations_total{outcome=~"pass|fail"}[30m]') == 4  # rate and increase
    assert expr.count(f"offset {baseline})") == 3 and expr.count("offset") == 3
    assert "- 0.1\n" in expr and ">= 20" in expr


def test_alert_thresholds_follow_the_values() -> None:
    pytest.importorskip("helm_python")
    values = {
        "runbookBaseURL": "https://runbooks.example/evald",
        "defaultRules": {
            "passRate": {"window": "1h", "baselines": ["2d"], "margin": 0.25, "minEvaluations": 100, "for": "30m"},
            "safety": {"failuresPerMinute": 2, "for": "1m"},
            "receiver": {"for": "20m"},
            "exporter": {"for": "5m"},
            "judge": {"errorRatio": 0.5, "for": "3m", "budgetFor": "2m", "circuitFor": "7m"},
            "kafka": {"lagFloor": 50000, "window": "30m", "for": "1h"},
            "auth": {"requestsPerMinute": 100, "for": "2m"},
        },
    }
    got = rules(rendered_groups(values))
    assert [k for k in got if k.startswith("EvaldPassRateRegression")] == ["EvaldPassRateRegression[2d]"]
    regression = got["EvaldPassRateRegression[2d]"]
    assert "[1h] offset 2d" in regression["expr"] and "[30m]" not in regression["expr"]
    assert "- 0.25\n" in regression["expr"] and ">= 100" in regression["expr"]
    assert regression["for"] == "30m"
    assert regression["annotations"]["runbook_url"] == "https://runbooks.example/evald#evaldpassrateregression"
    assert got["EvaldSafetyFailures"]["expr"].endswith("* 60 > 2") and got["EvaldSafetyFailures"]["for"] == "1m"
    assert got["EvaldReceiverRefusingSpans"]["for"] == got["EvaldAssemblyDroppingSpans"]["for"] == "20m"
    assert got["EvaldExporterSendFailures"]["for"] == got["EvaldExporterDroppingScores"]["for"] == "5m"
    judge_errors = got["EvaldJudgeErrorRate"]
    assert judge_errors["expr"].endswith("> 0.5") and judge_errors["for"] == "3m"
    assert got["EvaldJudgeBudgetExhausted"]["for"] == "2m" and got["EvaldJudgeCircuitOpen"]["for"] == "7m"
    lag = got["EvaldKafkaLagGrowing"]
    assert "[30m:1m]" in lag["expr"] and lag["expr"].endswith("> 50000") and lag["for"] == "1h"
    auth = got["EvaldUnauthenticatedRequests"]
    assert auth["expr"].endswith("* 60 > 100") and auth["for"] == "2m"


def test_judge_error_rate_counts_only_sent_requests(plain: dict[str, Any]) -> None:
    expr = rules(plain["groups"])["EvaldJudgeErrorRate"]["expr"]
    errors = 'outcome=~"rate_limited|server_error|timeout|malformed"'
    sent = 'outcome=~"ok|rate_limited|server_error|timeout|malformed"'
    assert errors in expr and sent in expr
    for skipped in ("budget_exhausted", "circuit_open", "never_send"):  # never sent: not errors, not in the ratio
        assert skipped not in expr


def test_budget_and_lag_alerts_watch_the_right_windows(plain: dict[str, Any]) -> None:
    got = rules(plain["groups"])
    budget = got["EvaldJudgeBudgetExhausted"]["expr"]
    assert 'evald_judge_budget_remaining_usd{window="day"}) <= 0' in budget
    assert 'increase(evald_judge_requests_total{outcome="budget_exhausted"}[10m])) > 0' in budget
    lag = got["EvaldKafkaLagGrowing"]["expr"]
    assert lag.startswith("deriv((sum by (job, receiver, topic) (evald_kafka_consumer_lag))[10m:1m]) > 0")
    assert "and on (job, receiver, topic)" in lag and lag.endswith("> 1000")
    assert got["EvaldJudgeCircuitOpen"]["expr"].endswith("(evald_judge_circuit_state) == 1")  # 1 = open


def test_alerts_use_only_series_evald_exposes(plain: dict[str, Any]) -> None:
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "evald").rglob("*.py"))
    for name, rule in rules(plain["groups"]).items():
        series = set(re.findall(r"\bevald_[a-z_]+\b", rule["expr"]))
        assert series, name
        for s in series:  # prometheus_client adds `_total` to counters
            assert f'"{s.removesuffix("_total")}"' in sources, f"{name}: evald defines no series {s}"


def test_safety_alert_selects_only_safety_failures(plain: dict[str, Any]) -> None:
    expr = rules(plain["groups"])["EvaldSafetyFailures"]["expr"]
    assert 'dimension="safety", outcome="fail"' in expr


def runbook_anchors() -> set[str]:
    anchors = set()
    for line in RUNBOOK.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            anchors.add(re.sub(r"[^a-z0-9 -]", "", line[3:].strip().lower()).replace(" ", "-"))
    return anchors


def test_every_alert_has_a_runbook_entry(plain: dict[str, Any]) -> None:
    anchors = runbook_anchors()
    text = RUNBOOK.read_text(encoding="utf-8")
    for rule in rules(plain["groups"]).values():
        name = rule["alert"]
        anchor = rule["annotations"]["runbook_url"].rpartition("#")[2]
        assert anchor == name.lower() and anchor in anchors, f"no `## {name}` section in docs/runbook.md"
        section = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        for part in ("**Meaning**", "**Check**", "**Act**"):
            assert part in section, f"docs/runbook.md {name}: no {part}"


def test_compose_prometheus_loads_the_rules_file() -> None:
    cfg = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text(encoding="utf-8"))
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yaml").read_text(encoding="utf-8"))
    (rule_file,) = cfg["rule_files"]
    mounts = compose["services"]["prometheus"]["volumes"]
    assert f"./prometheus/evald-alerts.yaml:{rule_file}:ro" in mounts


# --- promtool ------------------------------------------------------------------------------------------------------


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("promtool")
    if exe is None:
        pytest.skip("promtool is not installed (Debian package `prometheus`)")
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.integration
def test_promtool_check_rules() -> None:
    result = promtool("check", "rules", str(RULES_FILE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules(yaml.safe_load(RULES_FILE.read_text())['groups']))} rules found" in result.stdout


@pytest.mark.integration
def test_promtool_check_rules_with_non_default_values(tmp_path: Path) -> None:
    pytest.importorskip("helm_python")
    values = {"defaultRules": {"passRate": {
        "window": "2h", "baselines": ["12h", "1w"], "margin": 0.05, "minEvaluations": 0, "for": "1h",
    }}}
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": rendered_groups(values)}), encoding="utf-8")
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.integration
def test_promtool_unit_tests_fire_on_regressions_and_stay_quiet_when_healthy() -> None:
    covered: dict[str, set[bool]] = {}
    baselines_fired: set[str] = set()
    for path in RULES_TESTS:
        tests = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert tests["rule_files"] == ["../evald-alerts.yaml"], path
        for group in tests["tests"]:
            for case in group["alert_rule_test"]:
                covered.setdefault(case["alertname"], set()).add(bool(case["exp_alerts"]))
                baselines_fired |= {a["exp_labels"].get("baseline", "") for a in case["exp_alerts"]}
    assert {name: {True, False} for name in ALERTS} == covered, "each alert needs a firing and a quiet case"
    assert {"1d", "7d"} <= baselines_fired, "each pass-rate baseline needs a firing case"
    result = promtool("test", "rules", *map(str, RULES_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        RULES_FILE.write_text(plain_rules_text(), encoding="utf-8")
        print(f"wrote {RULES_FILE.relative_to(ROOT)}")
    else:
        sys.exit(f"usage: python3 {Path(__file__).relative_to(ROOT)} --write")
