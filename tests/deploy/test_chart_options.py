"""The chart's knobs for real clusters (issue 20): extra env and volumes, ServiceAccount, topology spread, startup
probe, preStop drain, the headless Service, and the NOTES warning for judges on several uncoordinated replicas.

Lint, schema and strict kubernetes-validate of each option run in test_helm_chart.py (its OPTIONS); this module
checks what each option renders. The goldens/policy mount is read by evald in test_chart_references.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.chart import NAMESPACE
from tests.deploy.test_helm_chart import OPTIONS, by_kind, container_of, manifests, render

helm_python = pytest.importorskip("helm_python")

JUDGES: dict[str, Any] = {"judges": {"fast": {"provider": "openai", "model": "gpt-4o-mini"},
                                     "safety": {"provider": "anthropic", "model": "claude-haiku-4-5"}}}


@pytest.fixture(scope="module")
def chart() -> Any:
    from tests.deploy.chart import CHART_DIR

    loaded = helm_python.Chart.load(str(CHART_DIR))
    yield loaded
    loaded.close()


def pod_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = by_kind(docs, "Deployment")["spec"]["template"]["spec"]
    return pod


def test_extra_env_and_env_from_come_after_the_secret_keys_and_keep_the_older_names(chart: Any) -> None:
    values: dict[str, Any] = {
        "extraEnvFromSecrets": [{"name": "OPENAI_API_KEY", "secretName": "evald-judge", "key": "openai"}],
        "extraEnv": [{"name": "EVALD_SAMPLING_RATIO", "value": "0.25"},
                     {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "env": [{"name": "OLD_NAME", "value": "kept"}],
        "extraEnvFrom": [{"secretRef": {"name": "evald-env"}}],
        "envFrom": [{"configMapRef": {"name": "evald-vars"}, "prefix": "EVALD_"}],
    }
    container = container_of(manifests(render(chart, values)))
    assert [e["name"] for e in container["env"]] == ["OPENAI_API_KEY", "EVALD_SAMPLING_RATIO", "POD_IP", "OLD_NAME"]
    assert container["env"][2] == values["extraEnv"][1]
    assert container["envFrom"] == [values["extraEnvFrom"][0], values["envFrom"][0]]
    plain = container_of(manifests(render(chart)))
    assert "env" not in plain and "envFrom" not in plain


def test_service_account_created_annotated_and_used_by_the_pod(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["serviceAccount"][0]))
    account = by_kind(docs, "ServiceAccount")
    pod = pod_of(docs)
    assert account["metadata"]["name"] == pod["serviceAccountName"] == "evald"
    assert account["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/j"}
    assert account["automountServiceAccountToken"] is True and pod["automountServiceAccountToken"] is True
    named = manifests(render(chart, {"serviceAccount": {"create": True, "name": "evald-judges"}}))
    assert by_kind(named, "ServiceAccount")["metadata"]["name"] == pod_of(named)["serviceAccountName"] == "evald-judges"
    assert by_kind(named, "ServiceAccount")["automountServiceAccountToken"] is False


def test_service_account_existing_or_default(chart: Any) -> None:
    existing = manifests(render(chart, {"serviceAccount": {"name": "shared-reader"}}))
    assert not [d for d in existing if d["kind"] == "ServiceAccount"]
    assert pod_of(existing)["serviceAccountName"] == "shared-reader"
    default = pod_of(manifests(render(chart)))
    assert "serviceAccountName" not in default and default["automountServiceAccountToken"] is False


def test_topology_spread_defaults_its_selector_to_the_pods(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["topologySpreadConstraints"][0]))
    pod_labels = by_kind(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    zone, host = pod_of(docs)["topologySpreadConstraints"]
    assert zone["topologyKey"] == "topology.kubernetes.io/zone" and zone["whenUnsatisfiable"] == "ScheduleAnyway"
    assert zone["labelSelector"]["matchLabels"] == by_kind(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    assert zone["labelSelector"]["matchLabels"].items() <= pod_labels.items()
    assert host["labelSelector"] == {"matchLabels": {"app.kubernetes.io/name": "evald"}}  # given: kept as is
    assert "topologySpreadConstraints" not in pod_of(manifests(render(chart)))


def test_startup_probe_guards_the_liveness_probe(chart: Any) -> None:
    container = container_of(manifests(render(chart, OPTIONS["probes-prestop"][0])))
    probe = container["startupProbe"]
    assert probe["httpGet"] == container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert probe["periodSeconds"] * probe["failureThreshold"] == 300 and "enabled" not in probe
    default = container_of(manifests(render(chart)))["startupProbe"]
    assert default["periodSeconds"] * default["failureThreshold"] == 60
    assert "startupProbe" not in container_of(manifests(render(chart, OPTIONS["no-startup-no-prestop"][0])))


def test_pre_stop_sleeps_before_sigterm_within_the_grace_period(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["probes-prestop"][0]))
    assert container_of(docs)["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "15"]}}}
    assert pod_of(docs)["terminationGracePeriodSeconds"] == 40  # > 10s shutdown_timeout + 15s sleep
    defaults = manifests(render(chart))
    (sleep_seconds,) = container_of(defaults)["lifecycle"]["preStop"]["exec"]["command"][1:]
    assert pod_of(defaults)["terminationGracePeriodSeconds"] > 10 + int(sleep_seconds)
    assert "lifecycle" not in container_of(manifests(render(chart, OPTIONS["no-startup-no-prestop"][0])))
    # without the hook only the drain counts; a shutdown_timeout from the environment cannot be checked at render
    render(chart, {"preStop": {"enabled": False}, "terminationGracePeriodSeconds": 11})
    render(chart, {"config": {"pipeline": {"shutdown_timeout": "${env:EVALD_SHUTDOWN:-60s}"}}})
    render(chart, {"rawConfig": "pipeline:\n  shutdown_timeout: 1500ms\n", "terminationGracePeriodSeconds": 7})
    with pytest.raises(helm_python.HelmError, match=r"shutdown_timeout \(25s\)"):
        render(chart, {"rawConfig": "pipeline:\n  shutdown_timeout: 25s\n"})


@pytest.mark.parametrize("timeout", ["20s", "20", 20, 19.5, "250ms", "0.5m", " 24 s ", "1500000us", "2000000µs",
                                     "20000000000ns"])
def test_the_grace_period_check_reads_shutdown_timeout_as_evald_does(chart: Any, timeout: Any) -> None:
    from evald.config.base import parse_duration

    needed = parse_duration(timeout) + 5  # + the default preStop sleep
    values: dict[str, Any] = {"config": {"pipeline": {"shutdown_timeout": timeout}}}
    at_most = int(needed)  # a grace period not above the drain and the sleep is refused ...
    with pytest.raises(helm_python.HelmError, match="must be greater than config pipeline.shutdown_timeout"):
        render(chart, {**values, "terminationGracePeriodSeconds": at_most})
    render(chart, {**values, "terminationGracePeriodSeconds": at_most + 1})  # ... one second more is enough


def test_headless_service_resolves_to_the_pods_container_ports(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["headless"][0]))
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    assert set(services) == {"evald", "evald-headless"}
    headless, main = services["evald-headless"], services["evald"]
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"] is False
    assert "clusterIP" not in main["spec"]
    assert headless["spec"]["selector"] == main["spec"]["selector"]
    assert headless["spec"]["selector"].items() <= by_kind(docs, "Deployment")["spec"]["template"]["metadata"][
        "labels"].items()
    # DNS answers are pod IPs, so clients dial the container ports: the Service ports must be the same numbers
    container_ports = {p["name"]: p["containerPort"] for p in container_of(docs)["ports"]}
    assert {p["name"]: p["port"] for p in headless["spec"]["ports"]} == container_ports
    moved = manifests(render(chart, {"service": {"headless": {"enabled": True}, "ports": {
        "otlpGrpc": 14317, "otlpHttp": 14318, "metrics": 19464}}}))
    (moved_headless,) = [d for d in moved if d["metadata"]["name"] == "evald-headless"]
    assert {p["port"] for p in moved_headless["spec"]["ports"]} == {4317, 4318, 9464}
    scorer = manifests(render(chart, OPTIONS["headless-kafka-scorer"][0]))
    (scorer_headless,) = [d for d in scorer if d["metadata"]["name"] == "evald-headless"]
    assert [p["name"] for p in scorer_headless["spec"]["ports"]] == ["metrics"]
    assert not [d for d in manifests(render(chart)) if d["metadata"]["name"] == "evald-headless"]


def notes(chart: Any, values: dict[str, Any]) -> str:
    text: str = render(chart, values)["evald/templates/NOTES.txt"]
    return text


@pytest.mark.parametrize("scaling", [{"replicaCount": 3}, {"autoscaling": {"enabled": True, "maxReplicas": 3}}],
                         ids=["replicas", "hpa"])
def test_notes_warn_about_judges_on_several_uncoordinated_replicas(chart: Any, scaling: dict[str, Any]) -> None:
    text = notes(chart, {**scaling, "service": {"headless": {"enabled": True}}, "config": JUDGES})
    (warning,) = [block for block in text.split("\n\n") if "LLM judges" in block]
    assert warning.startswith("WARNING:") and "not coordinated (fast, safety)" in warning
    assert "3 times" in warning and "budget" in warning and "requests_per_minute" in warning
    assert "judges.<name>.coordination" in warning
    assert "LLM judges" not in notes(chart, {**scaling, "service": {"headless": {"enabled": True}}})
    assert "LLM judges" not in notes(chart, {"config": JUDGES})  # one replica: nothing to coordinate
    scorer = notes(chart, {**scaling, "mode": "kafka-scorer", "config": JUDGES})
    assert "WARNING: " in scorer and "not coordinated" in scorer  # every mode: budgets multiply


def coordinated(expected_replicas: int) -> dict[str, Any]:
    return {"provider": "openai", "model": "gpt-4o-mini", "coordination": {
        "redis": {"url": "redis://redis.observability.svc:6379/0"}, "expected_replicas": expected_replicas}}


def test_notes_about_coordinated_judges(chart: Any) -> None:
    judges = {"judges": {"shared": coordinated(3), "fast": JUDGES["judges"]["fast"]}}
    text = notes(chart, {"replicaCount": 3, "service": {"headless": {"enabled": True}}, "config": judges})
    assert "not coordinated (fast)" in text and "shared" not in text  # coordinated for 3 replicas: nothing to say
    quiet = notes(chart, {"replicaCount": 3, "service": {"headless": {"enabled": True}},
                          "config": {"judges": {"shared": coordinated(3)}}})
    assert "WARNING" not in quiet and "coordinat" not in quiet
    under = notes(chart, {"autoscaling": {"enabled": True, "maxReplicas": 5},
                          "service": {"headless": {"enabled": True}}, "config": {"judges": {"shared": coordinated(2)}}})
    assert "expected_replicas below 5 (shared)" in under and "Set expected_replicas to 5" in under
    assert "not coordinated" not in under


def test_notes_print_the_loadbalancing_exporter_for_the_headless_service(chart: Any) -> None:
    text = notes(chart, OPTIONS["headless"][0])
    assert "loadbalancing/evald:" in text and "routing_key: traceID" in text
    assert f"hostname: evald-headless.{NAMESPACE}.svc.cluster.local" in text and "port: 4317" in text
    assert "WARNING" not in text
    without = notes(chart, {"replicaCount": 3})
    assert "WARNING: service.headless.enabled is false" in without and "loadbalancing/evald:" not in without
