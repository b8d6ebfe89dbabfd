"""The Helm chart, linted and rendered with Helm's own Go SDK (helm-python-sdk, no helm binary or cluster).

Every rendered core manifest is validated with kubernetes-validate in strict mode (unknown fields are errors)
against two Kubernetes versions; the Prometheus Operator CRDs it has no schema for are checked for structure.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

helm_python = pytest.importorskip("helm_python")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = ROOT / "helm" / "evald"
RELEASE = "evald"
NAMESPACE = "observability"
# the oldest Kubernetes the chart supports (Chart.yaml kubeVersion >=1.23; kubernetes-validate's oldest schema is
# 1.25) and the newest kubernetes-validate knows
KUBE_VERSIONS = ["1.25", "1.37"]
PROBE_PORTS = {"otlp-grpc": 4317, "otlp-http": 4318, "metrics": 9464}

ALL_ON: dict[str, Any] = {
    "serviceMonitor": {"enabled": True},
    "prometheusRule": {"enabled": True},
    "autoscaling": {"enabled": True},
    "podDisruptionBudget": {"enabled": True},
    "networkPolicy": {"enabled": True},
    "grafanaDashboard": {"enabled": True},
}
OPTIONS: dict[str, tuple[dict[str, Any], str]] = {
    # option -> (values, the template it adds)
    "defaults": ({}, ""),
    "serviceMonitor": ({"serviceMonitor": {"enabled": True, "extraLabels": {"release": "kps"}}}, "servicemonitor.yaml"),
    "prometheusRule": ({"prometheusRule": {"enabled": True, "extraLabels": {"release": "kps"}}}, "prometheusrule.yaml"),
    "autoscaling": ({"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 6}}, "hpa.yaml"),
    "podDisruptionBudget": ({"podDisruptionBudget": {"enabled": True}}, "pdb.yaml"),
    "grafanaDashboard": ({"grafanaDashboard": {"enabled": True}}, "dashboard-configmap.yaml"),
    "networkPolicy": (
        {
            "networkPolicy": {
                "enabled": True,
                "allowIngressFrom": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "otel-collector"}}}],
                "egressRules": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}],
            }
        },
        "networkpolicy.yaml",
    ),
    "secrets": (
        {
            "extraEnvFromSecrets": [
                {"name": "OPENAI_API_KEY", "secretName": "evald-judge", "key": "openai-api-key"},
                {"name": "LANGFUSE_SECRET_KEY", "secretName": "evald-langfuse", "key": "secret-key", "optional": True},
            ],
            "env": [{"name": "EVALD_SAMPLING_RATIO", "value": "0.5"}],
        },
        "",
    ),
    "everything": (ALL_ON, ""),
}
CRD_KINDS = {"ServiceMonitor", "PrometheusRule"}


@pytest.fixture(scope="module")
def chart() -> Any:
    loaded = helm_python.Chart.load(str(CHART_DIR))
    yield loaded
    loaded.close()


def render(chart: Any, values: dict[str, Any] | None = None) -> dict[str, str]:
    out: dict[str, str] = chart.render(copy.deepcopy(values or {}), name=RELEASE, namespace=NAMESPACE)
    return out


def manifests(rendered: dict[str, str]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path, text in sorted(rendered.items()):
        if path.endswith(".txt") or not text.strip():
            continue
        docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (doc,) = [d for d in docs if d["kind"] == kind]
    return doc


# --- lint and schema -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_chart_lints_clean_in_strict_mode(option: str) -> None:
    report = helm_python.lint(str(CHART_DIR), copy.deepcopy(OPTIONS[option][0]), strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    # severity 2 = warning, 3 = error; the only info message allowed is "icon is recommended"
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_default_values_pass_the_schema(chart: Any) -> None:
    chart.validate_schema(chart.merge_values({}))
    assert chart.schema is not None


RULES = "/prometheusRule/defaultRules"
BAD_VALUES: list[tuple[dict[str, Any], str]] = [
    ({"replicaCount": "two"}, "/replicaCount"),
    ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
    ({"image": {"repository": ""}}, "/image/repository"),
    ({"service": {"ports": {"otlpGrpc": 70000}}}, "/service/ports/otlpGrpc"),
    ({"containerPorts": {"metrics": "9464"}}, "/containerPorts/metrics"),
    ({"autoscaling": {"enabled": "yes"}}, "/autoscaling/enabled"),
    ({"autoscaling": {"targetCPUUtilizationPercentage": 150}}, "/autoscaling/targetCPUUtilizationPercentage"),
    ({"serviceMonitor": {"interval": "30 seconds"}}, "/serviceMonitor/interval"),
    ({"prometheusRule": {"defaultRules": {"passRate": {"margin": 1.5}}}}, f"{RULES}/passRate/margin"),
    ({"prometheusRule": {"defaultRules": {"passRate": {"margin": 0}}}}, f"{RULES}/passRate/margin"),
    ({"prometheusRule": {"defaultRules": {"safety": {"failuresPerMinute": -1}}}}, f"{RULES}/safety"),
    ({"extraEnvFromSecrets": [{"name": "OPENAI_API_KEY"}]}, "/extraEnvFromSecrets/0"),
    ({"extraEnvFromSecrets": [{"name": "bad-name", "secretName": "s", "key": "k"}]}, "/extraEnvFromSecrets/0/name"),
    ({"config": 42}, "/config"),
    ({"config": ""}, "/config"),
    ({"config": ["receivers"]}, "/config"),
    ({"rawConfig": {"receivers": {}}}, "/rawConfig"),
    ({"servicemonitor": {"enabled": True}}, "servicemonitor"),  # a typo: unknown top-level keys are refused
]


@pytest.mark.parametrize(("values", "where"), BAD_VALUES, ids=[w for _, w in BAD_VALUES])
def test_schema_rejects_bad_values(chart: Any, values: dict[str, Any], where: str) -> None:
    with pytest.raises(helm_python.HelmValuesError) as caught:
        chart.validate_schema(chart.merge_values(copy.deepcopy(values)))
    assert where in str(caught.value)
    with pytest.raises(helm_python.HelmValuesError):  # an install would refuse them too
        render(chart, values)


def test_a_release_without_config_is_refused(chart: Any) -> None:
    with pytest.raises(helm_python.HelmError):
        render(chart, {"config": None})  # null deletes the key, as `--set config=null` does


# --- rendering and kubernetes-validate -------------------------------------------------------------------------


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_rendered_core_manifests_are_valid_kubernetes(chart: Any, option: str) -> None:
    values, template = OPTIONS[option]
    rendered = render(chart, values)
    if template:
        assert rendered[f"evald/templates/{template}"].strip(), f"{template} is not rendered with {option} on"
    docs = manifests(rendered)
    core = [d for d in docs if d["kind"] not in CRD_KINDS]
    assert {d["kind"] for d in core} >= {"ConfigMap", "Deployment", "Service"}
    for doc in core:
        assert doc["metadata"]["namespace"] == NAMESPACE
        for version in KUBE_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as err:  # pragma: no cover - the message is the point
                pytest.fail(f"{doc['kind']} is invalid for Kubernetes {version}: {err.message} at {list(err.path)}")


def test_defaults_render_only_the_core_objects(chart: Any) -> None:
    kinds = sorted(d["kind"] for d in manifests(render(chart)))
    assert kinds == ["ConfigMap", "Deployment", "Service"]


def test_deployment_probes_security_and_config_mount(chart: Any) -> None:
    docs = manifests(render(chart))
    deployment = by_kind(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 1
    (container,) = pod["containers"]
    assert container["args"] == ["run", "--config", "/etc/evald/config.yaml"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == PROBE_PORTS
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert pod["automountServiceAccountToken"] is False
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["config"]["mountPath"] == "/etc/evald" and mounts["config"]["readOnly"] is True
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"]["name"] == by_kind(docs, "ConfigMap")["metadata"]["name"]
    assert "emptyDir" in volumes[mounts["tmp"]["name"]]  # the only writable path
    assert "checksum/config" in deployment["spec"]["template"]["metadata"]["annotations"]


def test_config_change_rolls_the_pods(chart: Any) -> None:
    def checksum(values: dict[str, Any]) -> str:
        deployment = by_kind(manifests(render(chart, values)), "Deployment")
        value: str = deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        return value

    changed = {"config": {**chart.values["config"], "pipeline": {"workers": 8}}}
    assert checksum({}) != checksum(changed)


def test_service_ports(chart: Any) -> None:
    service = by_kind(manifests(render(chart)), "Service")
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert {name: p["port"] for name, p in ports.items()} == PROBE_PORTS
    assert all(p["targetPort"] == name for name, p in ports.items())
    assert ports["otlp-grpc"]["appProtocol"] == "grpc"
    deployment = by_kind(manifests(render(chart)), "Deployment")
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_keys_come_from_existing_secrets(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["secrets"][0]))
    assert not [d for d in docs if d["kind"] == "Secret"], "the chart must not create Secrets holding keys"
    (container,) = by_kind(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["OPENAI_API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "evald-judge", "key": "openai-api-key"}}
    assert env["LANGFUSE_SECRET_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "evald-langfuse", "key": "secret-key", "optional": True,
    }
    assert env["EVALD_SAMPLING_RATIO"] == {"name": "EVALD_SAMPLING_RATIO", "value": "0.5"}


def test_autoscaling_targets_the_deployment_and_owns_replicas(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["autoscaling"][0]))
    hpa = by_kind(docs, "HorizontalPodAutoscaler")
    deployment = by_kind(docs, "Deployment")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": deployment["metadata"]["name"],
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 6)
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["target"]["averageUtilization"] == 80
    assert "replicas" not in deployment["spec"], "with an HPA the Deployment must not pin replicas"


def test_pdb_and_network_policy_select_the_pods(chart: Any) -> None:
    docs = manifests(render(chart, ALL_ON))
    pod_labels = by_kind(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    pdb = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1 and "minAvailable" not in pdb["spec"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    pdb_min = by_kind(manifests(render(chart, {"podDisruptionBudget": {"enabled": True, "minAvailable": 1}})),
                      "PodDisruptionBudget")
    assert pdb_min["spec"] == {**pdb_min["spec"], "minAvailable": 1} and "maxUnavailable" not in pdb_min["spec"]
    policy = by_kind(docs, "NetworkPolicy")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]  # egress stays open unless rules are given
    ports = sorted(p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"])
    assert ports == [4317, 4318, 9464]
    restricted = by_kind(manifests(render(chart, OPTIONS["networkPolicy"][0])), "NetworkPolicy")
    assert restricted["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert restricted["spec"]["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "otel-collector"}}}
    ]


# --- the Prometheus Operator CRDs: structure ------------------------------------------------------------------


def test_service_monitor_structure(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["serviceMonitor"][0]))
    monitor = by_kind(docs, "ServiceMonitor")
    service = by_kind(docs, "Service")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert set(monitor) == {"apiVersion", "kind", "metadata", "spec"}
    assert monitor["metadata"]["labels"]["release"] == "kps"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]} and endpoint["port"] == "metrics"
    assert endpoint["path"] == "/metrics"
    assert set(endpoint) <= {"port", "path", "interval", "scrapeTimeout", "relabelings", "metricRelabelings"}


def test_prometheus_rule_structure(chart: Any) -> None:
    rule = by_kind(manifests(render(chart, OPTIONS["prometheusRule"][0])), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert set(rule) == {"apiVersion", "kind", "metadata", "spec"} and set(rule["spec"]) == {"groups"}
    assert rule["metadata"]["labels"]["release"] == "kps"
    names = set()
    for group in rule["spec"]["groups"]:
        assert set(group) == {"name", "rules"} and group["rules"]
        for r in group["rules"]:
            assert set(r) == {"alert", "expr", "for", "labels", "annotations"}
            assert isinstance(r["expr"], str) and r["labels"]["severity"] in {"warning", "critical"}
            assert set(r["annotations"]) == {"summary", "description", "runbook_url"}
            names.add((r["alert"], r["labels"].get("baseline")))
    assert len(names) == sum(len(g["rules"]) for g in rule["spec"]["groups"]), "rules must differ in name or labels"
    assert {b for a, b in names if a == "EvaldPassRateRegression"} == {"1d", "7d"}


def test_prometheus_rule_takes_extra_groups_and_can_drop_the_defaults(chart: Any) -> None:
    extra = {"name": "mine", "rules": [{"alert": "Mine", "expr": "vector(1)"}]}
    values = {"prometheusRule": {"enabled": True, "defaultRules": {"enabled": False}, "groups": [extra]}}
    rule = by_kind(manifests(render(chart, values)), "PrometheusRule")
    assert rule["spec"]["groups"] == [extra]


# --- the ConfigMap holds values.config, and evald accepts it ------------------------------------------------------


def rendered_config(chart: Any, values: dict[str, Any] | None = None) -> str:
    configmap = by_kind(manifests(render(chart, values)), "ConfigMap")
    assert set(configmap["data"]) == {"config.yaml"}
    text: str = configmap["data"]["config.yaml"]
    return text


def evald_validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "evald", "validate", "--config", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )


def test_configmap_holds_values_config(chart: Any) -> None:
    text = rendered_config(chart)
    assert yaml.safe_load(text) == chart.values["config"]
    assert "${env:EVALD_SAMPLING_RATIO:-1.0}" in text  # env references reach evald untouched


@pytest.mark.parametrize("key", ["rawConfig", "config"])
def test_configmap_holds_a_string_config_verbatim(chart: Any, key: str) -> None:
    source = (ROOT / "deploy" / "evald-config.yaml").read_text(encoding="utf-8")  # comments and key order kept
    assert rendered_config(chart, {key: source}) == source.rstrip("\n") + "\n"


def test_raw_config_lints_without_a_merge_warning() -> None:
    values = {"rawConfig": (ROOT / "deploy" / "evald-config.yaml").read_text(encoding="utf-8")}
    report = helm_python.lint(str(CHART_DIR), values, strict=True, namespace=NAMESPACE)
    assert report["errors"] == [] and [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("kind", ["mapping", "rawConfig"])
def test_evald_validate_accepts_the_rendered_config(chart: Any, tmp_path: Path, kind: str) -> None:
    values = {} if kind == "mapping" else {"rawConfig": (ROOT / "deploy" / "evald-config.yaml").read_text()}
    result = evald_validate(tmp_path, rendered_config(chart, values))
    assert result.returncode == 0, result.stdout + result.stderr


def test_evald_validate_refuses_a_broken_rendered_config(chart: Any, tmp_path: Path) -> None:
    broken = copy.deepcopy(chart.values["config"])
    broken["pipeline"]["workers"] = "many"
    result = evald_validate(tmp_path, rendered_config(chart, {"config": broken}))
    assert result.returncode != 0


def test_notes_name_the_service(chart: Any) -> None:
    notes = render(chart, ALL_ON)["evald/templates/NOTES.txt"]
    assert f"evald.{NAMESPACE}.svc:4317" in notes
    assert "/readyz" in notes and "evald validate --config" in notes


def test_grafana_dashboard_configmap_carries_the_dashboard(chart: Any) -> None:
    docs = manifests(render(chart, {"grafanaDashboard": {"enabled": True}}))
    (dashboard,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-dashboard")]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["data"]["evald.json"] == (CHART_DIR / "dashboards" / "evald.json").read_text().rstrip("\n")
