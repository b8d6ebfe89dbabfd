"""Static checks of the deployment files: Dockerfile, Docker Compose stack, Helm chart (no Docker, Helm or network).

The evald configs they ship are validated with evald's own loader, so a config change that breaks them fails here.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CHART = ROOT / "helm" / "evald"
EVALD_PORTS = {4317, 4318, 9464}
CONFIG_PATH = "/etc/evald/config.yaml"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def port_of(endpoint: str) -> int:
    return int(endpoint.rpartition(":")[2])


# --- evald configs -------------------------------------------------------------------------------------------


def parse_evald_config(text: str, source: str) -> Any:
    from evald.config.loader import parse_config

    return parse_config(text, source, environ={})


def check_resolved(cfg: Any) -> None:
    assert set(cfg.receivers) == {"otlp"}
    otlp = cfg.receivers["otlp"]
    assert otlp.grpc.endpoint == "0.0.0.0:4317"
    assert otlp.http.endpoint == "0.0.0.0:4318"
    assert set(cfg.exporters) == {"prometheus"}
    assert cfg.exporters["prometheus"].endpoint == "0.0.0.0:9464"
    kinds = {m.kind for m in cfg.metrics}
    assert {"error_free", "latency", "token_usage", "json_valid", "contains"} <= kinds
    contains = [m for m in cfg.metrics if m.kind == "contains"]
    assert any(m.filter.service_name for m in contains), "the contains metric should show a filter"


def test_deploy_evald_config_validates_with_evalds_loader() -> None:
    path = DEPLOY / "evald-config.yaml"
    check_resolved(parse_evald_config(path.read_text(encoding="utf-8"), str(path)))


def helm_config() -> Any:
    values = load_yaml(CHART / "values.yaml")
    assert isinstance(values.get("config"), dict), "values.yaml `config:` must hold evald's config as a mapping"
    return values["config"]


def test_helm_values_config_validates_with_evalds_loader() -> None:
    # as the chart renders it: toYaml (sorted keys) into the ConfigMap, read back by `evald run --config`
    rendered = yaml.safe_dump(helm_config(), sort_keys=True, default_flow_style=False)
    check_resolved(parse_evald_config(rendered, "helm/evald/values.yaml#config"))


def test_helm_values_config_is_the_compose_config() -> None:
    assert helm_config() == load_yaml(DEPLOY / "evald-config.yaml"), (
        "helm/evald/values.yaml `config:` and deploy/evald-config.yaml should hold the same evald config"
    )


def test_evald_config_ports_match_chart_ports() -> None:
    values = load_yaml(CHART / "values.yaml")
    cfg = values["config"]
    wanted = {
        "otlpGrpc": port_of(cfg["receivers"]["otlp"]["grpc"]["endpoint"]),
        "otlpHttp": port_of(cfg["receivers"]["otlp"]["http"]["endpoint"]),
        "metrics": port_of(cfg["exporters"]["prometheus"]["endpoint"]),
    }
    assert values["containerPorts"] == wanted
    assert values["service"]["ports"] == wanted


# --- Dockerfile ------------------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append((keyword.upper(), args.strip()))
    assert not pending, "Dockerfile ends inside a line continuation"
    return out


def args_of(instructions: list[tuple[str, str]], keyword: str) -> list[str]:
    return [args for kw, args in instructions if kw == keyword]


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def test_dockerfile_is_multi_stage_with_a_wheel_builder() -> None:
    ins = dockerfile_instructions()
    # ARGs before the first FROM may parameterize the base image
    defaults: dict[str, str] = {}
    for kw, args in ins:
        if kw == "FROM":
            break
        if kw == "ARG" and "=" in args:
            name, _, default = args.partition("=")
            defaults[name] = default.strip('"')
    froms = [re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m.group(1), m.group(0)), a) for a in args_of(ins, "FROM")]
    assert len(froms) >= 2, froms
    assert re.fullmatch(r"python:3\.11-slim\S* AS builder", froms[0], flags=re.IGNORECASE), froms[0]
    assert froms[-1].split()[0] == "python:3.11-slim", froms[-1]
    runs = args_of(ins, "RUN")
    assert any("pip wheel" in r for r in runs)
    # the runtime stage installs from the builder's wheels only, and tini from Debian
    assert any("pip install" in r and "--no-index" in r and "/wheels" in r for r in runs)
    assert any("apt-get install" in r and "--no-install-recommends" in r and "tini" in r for r in runs)


def test_dockerfile_runs_as_non_root_with_tini_and_evald_run() -> None:
    ins = dockerfile_instructions()
    users = args_of(ins, "USER")
    assert users, "no USER instruction: the image would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0"), users[-1]
    assert user == "10001"
    assert exec_form(args_of(ins, "ENTRYPOINT")[-1]) == ["/usr/bin/tini", "--", "evald"]
    assert exec_form(args_of(ins, "CMD")[-1]) == ["run"]


def test_dockerfile_exposes_evalds_ports() -> None:
    exposed = {int(p.split("/")[0]) for args in args_of(dockerfile_instructions(), "EXPOSE") for p in args.split()}
    assert exposed >= EVALD_PORTS


def healthcheck_probe(command: list[str]) -> str:
    assert command[:2] == ["python", "-c"], command
    code = command[2]
    compile(code, "<healthcheck>", "exec")  # a syntax error would make the container unhealthy forever
    return code


def test_dockerfile_healthcheck_probes_healthz_with_python() -> None:
    checks = args_of(dockerfile_instructions(), "HEALTHCHECK")
    assert len(checks) == 1, checks
    _, _, command = checks[0].partition("CMD ")
    code = healthcheck_probe(exec_form(command))
    assert "urllib" in code and "http://127.0.0.1:9464/healthz" in code


def test_dockerignore_keeps_the_build_inputs_and_drops_the_rest() -> None:
    patterns = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {"tests", ".git", "docs", "**/__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"} <= patterns
    copied = [
        src
        for args in args_of(dockerfile_instructions(), "COPY")
        if not args.startswith("--from")
        for src in shlex.split(args)[:-1]
    ]
    assert {"pyproject.toml", "setup.py", "README.md", "evald"} <= set(copied), copied
    assert "**/*.so" in patterns  # extensions built for this machine must not reach the image's build
    for src in copied:
        assert (ROOT / src).exists(), src
        assert src not in patterns, f"{src} is copied by the Dockerfile but excluded by .dockerignore"


# --- Docker Compose ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc = load_yaml(DEPLOY / "docker-compose.yaml")
    assert isinstance(doc, dict)
    return doc


def published_and_exposed(service: dict[str, Any]) -> set[int]:
    ports: set[int] = set()
    for entry in [*service.get("ports", []), *service.get("expose", [])]:
        ports.add(int(str(entry).split("/")[0].rsplit(":", 1)[-1]))
    return ports


def test_compose_names_the_stack_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"collector", "evald", "prometheus", "grafana"}
    assert compose["services"]["collector"]["image"].startswith("otel/opentelemetry-collector-contrib:")


def test_compose_evald_service(compose: dict[str, Any]) -> None:
    evald = compose["services"]["evald"]
    assert published_and_exposed(evald) >= EVALD_PORTS
    assert (ROOT / "deploy" / evald["build"]["context"] / evald["build"].get("dockerfile", "Dockerfile")).is_file()
    assert evald["command"] == ["run", "--config", CONFIG_PATH]
    assert f"./evald-config.yaml:{CONFIG_PATH}:ro" in evald["volumes"]
    code = healthcheck_probe(evald["healthcheck"]["test"][1:])
    assert "9464/healthz" in code


def test_compose_bind_mounts_exist(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name}: {source} does not exist"


def test_compose_collector_and_prometheus_wiring(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert published_and_exposed(services["collector"]) >= {4317, 4318}
    assert any(v.startswith("./collector-config.yaml:") for v in services["collector"]["volumes"])
    assert any(v.startswith("./prometheus.yml:") for v in services["prometheus"]["volumes"])
    assert any(v.startswith("./grafana/provisioning:/etc/grafana/provisioning") for v in services["grafana"]["volumes"])


def test_collector_forwards_traces_and_logs_to_evald_over_otlp_grpc() -> None:
    cfg = load_yaml(DEPLOY / "collector-config.yaml")
    pipelines = cfg["service"]["pipelines"]
    for signal in ("traces", "logs"):
        pipeline = pipelines[signal]
        assert "otlp" in pipeline["receivers"]
        to_evald = [
            e for e in pipeline["exporters"]
            if e.split("/")[0] in ("otlp_grpc", "otlp") and cfg["exporters"][e]["endpoint"] == "evald:4317"
        ]
        assert to_evald, f"the {signal} pipeline does not export to evald:4317"
        assert cfg["exporters"][to_evald[0]]["tls"]["insecure"] is True
    for pipeline in pipelines.values():  # every referenced component is defined
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind, []):
                assert component in cfg[kind], f"{kind}: {component} is used but not defined"


def test_prometheus_scrapes_evald() -> None:
    cfg = load_yaml(DEPLOY / "prometheus.yml")
    targets = {t for job in cfg["scrape_configs"] for sc in job.get("static_configs", []) for t in sc["targets"]}
    assert "evald:9464" in targets


def test_grafana_provisions_the_prometheus_datasource() -> None:
    cfg = load_yaml(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yaml")
    assert cfg["apiVersion"] == 1
    (ds,) = [d for d in cfg["datasources"] if d["type"] == "prometheus"]
    assert ds["url"] == "http://prometheus:9090"


def test_deploy_readme_says_how_to_run_it() -> None:
    text = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert "docker compose -f deploy/docker-compose.yaml up" in text
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in text


# --- Helm chart ----------------------------------------------------------------------------------------------


def template(name: str) -> str:
    return (CHART / "templates" / name).read_text(encoding="utf-8")


def test_chart_metadata() -> None:
    chart = load_yaml(CHART / "Chart.yaml")
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "evald"
    assert str(chart["appVersion"]) == "0.1.0"
    assert re.fullmatch(r"\d+\.\d+\.\d+", str(chart["version"]))


@pytest.mark.parametrize("name", sorted(p.name for p in (CHART / "templates").iterdir()))
def test_chart_templates_are_balanced(name: str) -> None:
    text = template(name)
    assert text.count("{{") == text.count("}}"), name
    opened = len(re.findall(r"\{\{-?\s*(?:if|with|range|define)\b", text))
    assert opened == len(re.findall(r"\{\{-?\s*end\b", text)), f"{name}: unbalanced if/with/range/define ... end"


def test_chart_configmap_renders_values_config() -> None:
    text = template("configmap.yaml")
    assert "kind: ConfigMap" in text
    assert '{{- include "evald.config" . | nindent 4 }}' in text
    helpers = template("_helpers.tpl")  # .Values.config is rendered with toYaml (a copy, with judge coordination)
    assert re.search(r"\$config := deepCopy \(required [^\n]*\.Values\.config\)", helpers)
    assert "{{- toYaml $config }}" in helpers
    assert "config.yaml:" in text


def test_chart_deployment() -> None:
    text = template("deployment.yaml")
    assert 'args: {{ include "evald.args" . }}' in text
    assert 'list "run" "--config" "/etc/evald/config.yaml"' in template("_helpers.tpl")
    assert "checksum/config:" in text and '"/configmap.yaml"' in text
    assert re.search(r"livenessProbe:\s+httpGet:\s+path: /healthz\s+port: metrics", text)
    assert re.search(r"readinessProbe:\s+httpGet:\s+path: /readyz\s+port: metrics", text)
    assert "mountPath: /etc/evald" in text
    for key in (".Values.podSecurityContext", ".Values.securityContext", ".Values.env", ".Values.envFrom"):
        assert key in text


def test_chart_service_ports() -> None:
    text = template("service.yaml")
    for name in ("otlp-grpc", "otlp-http", "metrics"):
        assert f"- name: {name}" in text and f"targetPort: {name}" in text


def test_chart_values_run_non_root_with_a_read_only_root_filesystem() -> None:
    values = load_yaml(CHART / "values.yaml")
    assert values["podSecurityContext"]["runAsNonRoot"] is True
    assert values["podSecurityContext"]["runAsUser"] == 10001
    assert values["securityContext"]["readOnlyRootFilesystem"] is True
    assert values["securityContext"]["allowPrivilegeEscalation"] is False
    assert values["image"]["repository"] and "tag" in values["image"]
    assert isinstance(values["replicaCount"], int) and "resources" in values
    assert values["env"] == [] and values["envFrom"] == []
