"""The chart's judgeCoordination option (issue 19): an existing Redis (URL and a Secret for the password) is
injected into every judge of `config` as judges.<name>.coordination reading ${env:EVALD_REDIS_URL} and
${env:EVALD_REDIS_PASSWORD}, which the Deployment sets; evald accepts the rendered config; the NOTES then have no
uncoordinated-judges warning; the example values (bitnami/redis) lint clean."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import CHART_DIR, NAMESPACE, evald_validate
from tests.deploy.test_helm_chart import by_kind, container_of, manifests, render

helm_python = pytest.importorskip("helm_python")
EXAMPLE: dict[str, Any] = yaml.safe_load((CHART_DIR / "examples" / "values-judge-redis.yaml").read_text())


@pytest.fixture(scope="module")
def chart() -> Any:
    loaded = helm_python.Chart.load(str(CHART_DIR))
    yield loaded
    loaded.close()


def _config(rendered: dict[str, str]) -> dict[str, Any]:
    configmap = by_kind(manifests(rendered), "ConfigMap")
    config: dict[str, Any] = yaml.safe_load(configmap["data"]["config.yaml"])
    return config


def test_the_example_lints_clean_and_injects_coordination_into_every_judge(
        chart: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = helm_python.lint(str(CHART_DIR), copy.deepcopy(EXAMPLE), strict=True, namespace=NAMESPACE)
    assert report["errors"] == [] and [m for m in report["messages"] if m["severity"] >= 2] == []
    rendered = render(chart, EXAMPLE)
    coordination = _config(rendered)["judges"]["default"]["coordination"]
    assert coordination == {"redis": {"url": "${env:EVALD_REDIS_URL}", "key_prefix": "evald", "timeout": "1s",
                                      "password": "${env:EVALD_REDIS_PASSWORD}"}, "expected_replicas": 5}
    env = {e["name"]: e for e in container_of(manifests(rendered))["env"]}
    assert env["EVALD_REDIS_URL"]["value"] == "redis://evald-redis-master.observability.svc:6379/0"
    assert env["EVALD_REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "evald-redis",
                                                                         "key": "redis-password"}
    notes = rendered["evald/templates/NOTES.txt"]
    assert "not coordinated" not in notes and "expected_replicas below" not in notes
    text = by_kind(manifests(rendered), "ConfigMap")["data"]["config.yaml"]
    for name, value in (("EVALD_REDIS_URL", env["EVALD_REDIS_URL"]["value"]), ("EVALD_REDIS_PASSWORD", "x"),
                        ("OPENAI_API_KEY", "sk-x")):
        monkeypatch.setenv(name, value)  # as the Deployment sets them
    result = evald_validate(tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_judge_with_its_own_coordination_keeps_it_and_without_a_url_nothing_is_injected(chart: Any) -> None:
    own = {"redis": {"url": "redis://elsewhere:6379/1"}, "expected_replicas": 9}
    values = {"replicaCount": 2, "service": {"headless": {"enabled": True}},
              "judgeCoordination": {"redis": {"url": "redis://r:6379/0"}, "expectedReplicas": 4},
              "config": {"judges": {"own": {"provider": "openai", "model": "m", "coordination": own},
                                    "plain": {"provider": "openai", "model": "m"}}}}
    rendered = render(chart, values)
    judges = _config(rendered)["judges"]
    assert judges["own"]["coordination"] == own
    assert judges["plain"]["coordination"]["expected_replicas"] == 4
    assert "password" not in judges["plain"]["coordination"]["redis"]  # no existingSecret: no password
    env = {e["name"] for e in container_of(manifests(rendered))["env"]}
    assert "EVALD_REDIS_URL" in env and "EVALD_REDIS_PASSWORD" not in env
    plain = render(chart, {**values, "judgeCoordination": {"redis": {"url": ""}}})
    assert all("coordination" not in judge or name == "own" for name, judge in _config(plain)["judges"].items())
    assert "not coordinated (plain)" in plain["evald/templates/NOTES.txt"]


@pytest.mark.parametrize("url", ["http://redis:6379", "redis://user:secret@redis:6379/0"])
def test_the_schema_refuses_a_url_that_is_not_redis_or_holds_a_password(chart: Any, url: str) -> None:
    with pytest.raises(helm_python.HelmValuesError, match="judgeCoordination"):
        chart.validate_schema(chart.merge_values({"judgeCoordination": {"redis": {"url": url}}}))
