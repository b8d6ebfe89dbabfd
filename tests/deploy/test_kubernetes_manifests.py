"""deploy/kubernetes/*.yaml: the chart rendered by deploy/kubernetes/render.py, never stale, valid Kubernetes.

Regenerate after changing the chart or the values-<variant>.yaml files: python3 deploy/kubernetes/render.py
"""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from tests.deploy.chart import CRD_KINDS, KUBE_VERSIONS, NAMESPACE, ROOT

HERE = ROOT / "deploy" / "kubernetes"


@pytest.fixture(scope="module")
def render() -> ModuleType:
    spec = importlib.util.spec_from_file_location("k8s_render", HERE / "render.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documents(variant: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((HERE / f"{variant}.yaml").read_text(encoding="utf-8")) if d]


def deployment(variant: str) -> dict[str, Any]:
    (doc,) = [d for d in documents(variant) if d["kind"] == "Deployment"]
    return doc


@pytest.mark.parametrize("variant", ["standalone", "kafka-scorer"])
def test_rendered_file_is_not_stale(render: ModuleType, variant: str) -> None:
    assert variant in render.VARIANTS
    assert (HERE / f"{variant}.yaml").read_text(encoding="utf-8") == render.render(variant), (
        f"deploy/kubernetes/{variant}.yaml is stale: run python3 deploy/kubernetes/render.py"
    )


@pytest.mark.parametrize("variant", ["standalone", "kafka-scorer"])
def test_rendered_manifests_are_valid_kubernetes(variant: str) -> None:
    docs = documents(variant)
    assert {d["kind"] for d in docs} >= {"ConfigMap", "Deployment", "Service", "PrometheusRule", "ServiceMonitor"}
    for doc in docs:
        assert doc["metadata"]["namespace"] == NAMESPACE
        if doc["kind"] in CRD_KINDS:
            assert doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["spec"]
            continue
        for version in KUBE_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_the_two_variants_differ_where_the_mode_says() -> None:
    (standalone,) = deployment("standalone")["spec"]["template"]["spec"]["containers"]
    (scorer,) = deployment("kafka-scorer")["spec"]["template"]["spec"]["containers"]
    assert standalone["args"] == ["run", "--config", "/etc/evald/config.yaml"]
    assert scorer["args"] == ["run", "--config", "/etc/evald/config.yaml", "--role", "score"]
    (service,) = [d for d in documents("kafka-scorer") if d["kind"] == "Service"]
    assert [p["name"] for p in service["spec"]["ports"]] == ["metrics"]
    (hpa,) = [d for d in documents("kafka-scorer") if d["kind"] == "HorizontalPodAutoscaler"]
    assert {m["type"] for m in hpa["spec"]["metrics"]} == {"Resource", "External"}
    (configmap,) = [d for d in documents("kafka-scorer") if d["kind"] == "ConfigMap" and "config.yaml" in d["data"]]
    receivers = yaml.safe_load(configmap["data"]["config.yaml"])["receivers"]
    assert set(receivers) == {"kafka"} and receivers["kafka"]["traces"]["topic"] == "otlp_spans"


def test_header_says_how_it_was_made() -> None:
    for variant in ("standalone", "kafka-scorer"):
        head = (HERE / f"{variant}.yaml").read_text(encoding="utf-8").splitlines()[:3]
        assert any("python deploy/kubernetes/render.py" in line for line in head)
