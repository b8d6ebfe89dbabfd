"""The Helm chart, linted and rendered with Helm's own Go SDK (helm-python-sdk, no helm binary or cluster).

Every rendered core manifest is validated with kubernetes-validate in strict mode (unknown fields are errors)
against two Kubernetes versions; the Prometheus Operator CRDs it has no schema for are checked for structure.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import CHART_DIR, CRD_KINDS, KUBE_VERSIONS, NAMESPACE, RELEASE, ROOT, evald_validate

helm_python = pytest.importorskip("helm_python")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

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
    "kafka-scorer": (
        {
            "mode": "kafka-scorer",
            "replicaCount": 3,
            "autoscaling": {"enabled": True, "maxReplicas": 6, "kafkaLag": {"enabled": True,
                                                                          "selector": {"topic": "otlp_spans"}}},
            "networkPolicy": {"enabled": True},
            "config": {"receivers": {"otlp": None, "kafka": {
                "brokers": ["kafka:9092"], "traces": {"topic": "otlp_spans", "encoding": "otlp_proto"}}}},
        },
        "hpa.yaml",
    ),
    "kafka-scorer-lag-only": (
        {"mode": "kafka-scorer",
         "autoscaling": {"enabled": True, "targetCPUUtilizationPercentage": None, "kafkaLag": {"enabled": True}}},
        "hpa.yaml",
    ),
    "ingest": ({"mode": "ingest", "networkPolicy": {"enabled": True}}, "networkpolicy.yaml"),
    "tls": ({"tls": {"enabled": True, "secretName": "evald-tls"}}, ""),
    "mtls-auth": (
        {"tls": {"enabled": True, "secretName": "evald-tls", "clientCASecretName": "evald-client-ca"},
         "auth": {"existingSecret": "evald-token", "key": "otlp-token"}},
        "",
    ),
    # issue 20: knobs for real clusters (their behaviour: tests/deploy/test_chart_options.py)
    "extraVolumes": (yaml.safe_load((CHART_DIR / "examples" / "values-goldens-policy.yaml").read_text()), ""),
    "extraEnv": ({"extraEnv": [{"name": "EVALD_SAMPLING_RATIO", "value": "0.25"}],
                  "extraEnvFrom": [{"secretRef": {"name": "evald-env"}}, {"configMapRef": {"name": "evald-vars"}}]},
                 ""),
    "serviceAccount": ({"serviceAccount": {"create": True, "automount": True,
                                           "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/j"}}},
                       "serviceaccount.yaml"),
    "topologySpreadConstraints": (
        {"replicaCount": 3, "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "evald"}}}]},
        "",
    ),
    "probes-prestop": ({"startupProbe": {"enabled": True, "periodSeconds": 5, "failureThreshold": 60},
                       "preStop": {"enabled": True, "sleepSeconds": 15}, "terminationGracePeriodSeconds": 40}, ""),
    "no-startup-no-prestop": ({"startupProbe": {"enabled": False}, "preStop": {"enabled": False}}, ""),
    "headless": ({"replicaCount": 3, "service": {"headless": {"enabled": True}}}, "service-headless.yaml"),
    "headless-kafka-scorer": ({"mode": "kafka-scorer", "service": {"headless": {"enabled": True}}},
                              "service-headless.yaml"),
    # the WAL / persistent sending queue volume (its behaviour: tests/deploy/test_chart_persistence.py)
    "persistence": ({"persistence": {"enabled": True, "size": "5Gi", "storageClassName": "fast-ssd",
                                     "annotations": {"helm.sh/resource-policy": "keep"}},
                     "config": {"receivers": {"otlp": {"wal": {"directory": "/var/lib/evald/wal"}}}}}, "pvc.yaml"),
    "persistence-existing-claim": ({"mode": "kafka-scorer", "persistence": {
        "enabled": True, "existingClaim": "evald-queue", "mountPath": "/data"}}, ""),
}
TLS_ON: dict[str, Any] = OPTIONS["mtls-auth"][0]


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
    ({"mode": "sidecar"}, "/mode"),
    ({"tls": {"enabled": "yes"}}, "/tls/enabled"),
    ({"tls": {"secretName": "Not_A_Secret"}}, "/tls/secretName"),
    ({"tls": {"clientCAsecret": "x"}}, "/tls"),
    ({"auth": {"existingSecret": "tok", "key": ""}}, "/auth/key"),
    ({"autoscaling": {"kafkaLag": {"targetAverageValue": "lots"}}}, "/autoscaling/kafkaLag/targetAverageValue"),
    ({"prometheusRule": {"defaultRules": {"judge": {"errorRatio": 2}}}}, f"{RULES}/judge"),
    ({"prometheusRule": {"defaultRules": {"kafka": {"window": "ten minutes"}}}}, f"{RULES}/kafka"),
    ({"prometheusRule": {"defaultRules": {"auth": {"requestsPerMinute": -1}}}}, f"{RULES}/auth"),
    # issue 20's knobs: strict like the rest
    ({"extraVolumes": [{"configMap": {"name": "refs"}}]}, "/extraVolumes/0"),
    ({"extraVolumes": [{"name": "Refs", "configMap": {"name": "refs"}}]}, "/extraVolumes/0/name"),
    ({"extraVolumeMounts": [{"name": "refs", "mountPath": "relative/dir"}]}, "/extraVolumeMounts/0/mountPath"),
    ({"extraVolumeMounts": [{"name": "refs", "mountPath": "/x", "readonly": True}]}, "/extraVolumeMounts/0"),
    ({"extraEnv": [{"value": "1"}]}, "/extraEnv/0"),
    ({"extraEnvFrom": [{"secretRef": {"name": "s"}, "secretsRef": {"name": "s"}}]}, "/extraEnvFrom/0"),
    ({"serviceAccount": {"create": "yes"}}, "/serviceAccount/create"),
    ({"serviceAccount": {"name": "Not_An_Account"}}, "/serviceAccount/name"),
    ({"serviceAccount": {"automountToken": True}}, "/serviceAccount"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone"}]}, "/topologySpreadConstraints/0"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]},
     "/topologySpreadConstraints/0/whenUnsatisfiable"),
    ({"startupProbe": {"failureThreshold": 0}}, "/startupProbe/failureThreshold"),
    ({"startupProbe": {"path": "/healthz"}}, "/startupProbe"),
    ({"preStop": {"sleepSeconds": "5s"}}, "/preStop/sleepSeconds"),
    ({"preStop": {"sleep": 5}}, "/preStop"),
    ({"service": {"headless": {"enabled": "yes"}}}, "/service/headless/enabled"),
    ({"service": {"headless": {"clusterIP": "None"}}}, "/service/headless"),
    ({"persistence": {"enabled": "yes"}}, "/persistence/enabled"),
    ({"persistence": {"size": "lots"}}, "/persistence/size"),
    ({"persistence": {"mountPath": "var/lib/evald"}}, "/persistence/mountPath"),
    ({"persistence": {"accessModes": ["ReadOnlyMany"]}}, "/persistence/accessModes/0"),
    ({"persistence": {"accessModes": []}}, "/persistence/accessModes"),
    ({"persistence": {"existingClaim": "Not_A_Claim"}}, "/persistence/existingClaim"),
    ({"persistence": {"storageClass": "fast"}}, "/persistence"),
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
    (source,) = volumes["config"]["projected"]["sources"]  # without tls/auth: only the config
    assert source["configMap"]["name"] == by_kind(docs, "ConfigMap")["metadata"]["name"]
    assert source["configMap"]["items"] == [{"key": "config.yaml", "path": "config.yaml"}]
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
    for setting in ({"minAvailable": 1}, {"maxUnavailable": 0}):  # 0: no voluntary evictions, not the default 1
        pdb_set = by_kind(manifests(render(chart, {"podDisruptionBudget": {"enabled": True, **setting}})),
                          "PodDisruptionBudget")
        assert pdb_set["spec"] == {**setting, "selector": pdb["spec"]["selector"]}
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
    # one paragraph of its own, one indented line per enabled object
    assert "'\n\nMonitoring and scaling:\n  A ServiceMonitor (evald) " in notes
    assert "\n  A PrometheusRule (evald) " in notes and "\n  Autoscaling from 1 to 5 replicas on CPU:" in notes


def test_grafana_dashboard_configmap_carries_the_dashboard(chart: Any) -> None:
    docs = manifests(render(chart, {"grafanaDashboard": {"enabled": True}}))
    (dashboard,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-dashboard")]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["data"]["evald.json"] == (CHART_DIR / "dashboards" / "evald.json").read_text().rstrip("\n")


# --- modes: standalone, kafka-scorer, ingest -----------------------------------------------------------------------


def container_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = by_kind(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    (container,) = containers
    return container


@pytest.mark.parametrize(("mode", "role"), [("standalone", None), ("kafka-scorer", "score"), ("ingest", "ingest")])
def test_mode_sets_the_role_and_the_ports(chart: Any, mode: str, role: str | None) -> None:
    docs = manifests(render(chart, {"mode": mode, "networkPolicy": {"enabled": True}}))
    container = container_of(docs)
    base = ["run", "--config", "/etc/evald/config.yaml"]
    assert container["args"] == (base if role is None else [*base, "--role", role])
    service_ports = {p["name"] for p in by_kind(docs, "Service")["spec"]["ports"]}
    container_ports = {p["name"] for p in container["ports"]}
    policy_ports = {p["port"] for r in by_kind(docs, "NetworkPolicy")["spec"]["ingress"] for p in r["ports"]}
    if mode == "kafka-scorer":  # consumes Kafka: nothing to receive, only the metrics port (probes, scrapes)
        assert service_ports == container_ports == {"metrics"} and policy_ports == {9464}
    else:
        assert service_ports == container_ports == set(PROBE_PORTS) and policy_ports == {4317, 4318, 9464}
    assert container["livenessProbe"]["httpGet"]["port"] == "metrics"


def test_kafka_scorer_hpa_scales_on_the_summed_lag(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["kafka-scorer"][0]))
    hpa = by_kind(docs, "HorizontalPodAutoscaler")
    cpu, lag = hpa["spec"]["metrics"]
    assert cpu["type"] == "Resource" and cpu["resource"]["name"] == "cpu"
    assert lag == {"type": "External", "external": {
        "metric": {"name": "evald_kafka_consumer_lag", "selector": {"matchLabels": {"topic": "otlp_spans"}}},
        "target": {"type": "AverageValue", "averageValue": "1000"},
    }}
    assert "replicas" not in by_kind(docs, "Deployment")["spec"]
    (only_lag,) = by_kind(manifests(render(chart, OPTIONS["kafka-scorer-lag-only"][0])),
                          "HorizontalPodAutoscaler")["spec"]["metrics"]
    assert only_lag["type"] == "External"


def test_kafka_scorer_config_drops_the_otlp_receivers_and_validates(chart: Any, tmp_path: Path) -> None:
    text = rendered_config(chart, OPTIONS["kafka-scorer"][0])
    receivers = yaml.safe_load(text)["receivers"]
    assert set(receivers) == {"kafka"}
    result = evald_validate(tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr


BAD_COMBINATIONS: list[tuple[dict[str, Any], str]] = [
    ({"autoscaling": {"enabled": True, "kafkaLag": {"enabled": True}}}, "only for mode kafka-scorer"),
    ({"mode": "kafka-scorer", "autoscaling": {"enabled": True, "targetCPUUtilizationPercentage": None}},
     "needs targetCPUUtilizationPercentage or kafkaLag.enabled"),
    ({"tls": {"enabled": True}}, "tls.enabled needs tls.secretName"),
    ({"tls": {"clientCASecretName": "ca"}}, "needs tls.enabled"),
    ({"terminationGracePeriodSeconds": 15}, "must be greater than config pipeline.shutdown_timeout (10s)"),
    ({"config": {"pipeline": {"shutdown_timeout": "1m"}}},
     "pipeline.shutdown_timeout (60s) + preStop.sleepSeconds (5)"),
    ({"config": {"pipeline": {"shutdown_timeout": 24.5}}, "preStop": {"sleepSeconds": 6}},
     "pipeline.shutdown_timeout (24.5s) + preStop.sleepSeconds (6)"),
    ({"extraVolumeMounts": [{"name": "refs", "mountPath": "/etc/evald-references"}]},
     'extraVolumeMounts "refs" names no volume'),
    ({"extraVolumes": [{"name": "refs", "emptyDir": {}}],
      "extraVolumeMounts": [{"name": "refs", "mountPath": "/etc/evald/goldens"}]}, "inside the chart's own mounts"),
    ({"persistence": {"enabled": True}, "replicaCount": 2}, "persistence needs a single replica"),
    ({"persistence": {"enabled": True}, "autoscaling": {"enabled": True}}, "persistence needs a single replica"),
    ({"persistence": {"enabled": True, "mountPath": "/tmp/evald"}}, "persistence.mountPath /tmp/evald is inside"),
    ({"persistence": {"enabled": True}, "extraVolumes": [{"name": "data", "emptyDir": {}}]},
     "persistence mounts a volume named data"),
]


@pytest.mark.parametrize(("values", "message"), BAD_COMBINATIONS, ids=[m for _, m in BAD_COMBINATIONS])
def test_render_refuses_bad_combinations(chart: Any, values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm_python.HelmError) as caught:
        render(chart, values)
    assert message in str(caught.value)


def test_notes_per_mode(chart: Any) -> None:
    scorer = render(chart, OPTIONS["kafka-scorer"][0])["evald/templates/NOTES.txt"]
    assert "--role score" in scorer and "otlp_grpc/evald" not in scorer and "WARNING" not in scorer
    named = {"mode": "kafka-scorer", "config": {"receivers": {"kafka/eu": {"brokers": ["kafka:9092"]}}}}
    assert "WARNING" not in render(chart, named)["evald/templates/NOTES.txt"]
    assert "Kafka lag (external metric evald_kafka_consumer_lag" in scorer and "docs/collector.md" in scorer
    kafka_exporter_only = {"exporters": {"kafka": {"brokers": ["kafka:9092"], "topic": "evald_scores"}}}
    for values in ({}, {"config": kafka_exporter_only}):  # a kafka exporter is not the receiver the role reads
        no_kafka = render(chart, {"mode": "kafka-scorer", **values})["evald/templates/NOTES.txt"]
        assert "WARNING: the config has no `kafka` receiver" in no_kafka
    ingest = render(chart, {"mode": "ingest"})["evald/templates/NOTES.txt"]
    assert "--role ingest" in ingest and "otlp_grpc/evald" in ingest
    assert "WARNING: the config has no top-level `ingest:` block" in ingest
    producing = {"mode": "ingest", "config": {"ingest": {"brokers": ["kafka:9092"], "traces": {"topic": "otlp_spans"}}}}
    assert "WARNING" not in render(chart, producing)["evald/templates/NOTES.txt"]


# --- TLS and auth from existing Secrets ----------------------------------------------------------------------------


def test_tls_and_auth_mount_the_secrets_read_only(chart: Any) -> None:
    docs = manifests(render(chart, TLS_ON))
    assert not [d for d in docs if d["kind"] == "Secret"], "the chart must not create Secrets"
    pod = by_kind(docs, "Deployment")["spec"]["template"]["spec"]
    (mount,) = [m for m in container_of(docs)["volumeMounts"] if m["mountPath"].startswith("/etc/evald")]
    assert mount == {"name": "config", "mountPath": "/etc/evald", "readOnly": True}
    (volume,) = [v for v in pod["volumes"] if v["name"] == "config"]
    files = {  # path under /etc/evald -> (Secret or ConfigMap, key)
        item["path"]: (src.get("secret", src.get("configMap"))["name"], item["key"])
        for src in volume["projected"]["sources"] for item in src.get("secret", src.get("configMap"))["items"]
    }
    assert files == {
        "config.yaml": ("evald", "config.yaml"),
        "tls/tls.crt": ("evald-tls", "tls.crt"),
        "tls/tls.key": ("evald-tls", "tls.key"),
        "tls/ca.crt": ("evald-client-ca", "ca.crt"),
        "auth/token": ("evald-token", "otlp-token"),
    }
    server_only = manifests(render(chart, OPTIONS["tls"][0]))
    (volume,) = [v for v in by_kind(server_only, "Deployment")["spec"]["template"]["spec"]["volumes"]
                 if v["name"] == "config"]
    paths = {i["path"] for s in volume["projected"]["sources"] for i in s.get("secret", s.get("configMap"))["items"]}
    assert paths == {"config.yaml", "tls/tls.crt", "tls/tls.key"}


def test_notes_tell_the_config_keys_until_the_config_uses_the_mounts(chart: Any) -> None:
    notes = render(chart, TLS_ON)["evald/templates/NOTES.txt"]
    assert "mounted at /etc/evald/tls/tls.crt and /etc/evald/tls/tls.key" in notes
    assert "client_ca_file: /etc/evald/tls/ca.crt" in notes and "token_files: [/etc/evald/auth/token]" in notes
    assert notes.count("WARNING") == 2 and "https://evald.observability.svc:4318" in notes
    assert "authorization:" in notes  # the Collector side: which header carries the token
    tls = {"cert_file": "/etc/evald/tls/tls.crt", "key_file": "/etc/evald/tls/tls.key",
           "client_ca_file": "/etc/evald/tls/ca.crt"}
    auth = {"token_files": ["/etc/evald/auth/token"]}
    wired = copy.deepcopy(TLS_ON)
    wired["config"] = {"receivers": {"otlp": {"grpc": {"tls": tls, "auth": auth}, "http": {"tls": tls, "auth": auth}}}}
    quiet = render(chart, wired)["evald/templates/NOTES.txt"]
    assert "WARNING" not in quiet and "mounted at /etc/evald/auth/token" in quiet
    rendered = yaml.safe_load(rendered_config(chart, wired))["receivers"]["otlp"]
    assert rendered["grpc"]["tls"] == tls and rendered["grpc"]["endpoint"] == "0.0.0.0:4317"  # deep-merged
