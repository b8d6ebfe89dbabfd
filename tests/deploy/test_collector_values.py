"""deploy/collector/values-*.yaml: values for the official opentelemetry-collector chart that feed evald.

values-otlp.yaml forwards traces and logs to evald's Service over OTLP gRPC (`otlp_grpc`, with the note on the older
`otlp` name); values-kafka.yaml writes them to Kafka keyed by trace id for evald in mode kafka-scorer, whose values
(deploy/kubernetes/values-kafka-scorer.yaml) must read the same topics and brokers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from evald.receivers.kafka_config import KafkaReceiverConfig
from tests.deploy.chart import ROOT, evald_validate, render_chart

COLLECTOR = ROOT / "deploy" / "collector"
SCORER_VALUES = ROOT / "deploy" / "kubernetes" / "values-kafka-scorer.yaml"
CHART_MODES = {"daemonset", "deployment", "statefulset"}  # the collector chart has no sidecar mode
# components of the collector chart's default config that the pipelines below may use
DEFAULT_COMPONENTS = {"receivers": {"otlp", "jaeger", "zipkin", "prometheus"},
                      "processors": {"memory_limiter", "batch"}, "exporters": {"debug"}}


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((COLLECTOR / name).read_text(encoding="utf-8"))
    return doc


def check_chart_values(values: dict[str, Any], exporter: str) -> dict[str, Any]:
    """Shared checks; returns the exporter's config."""
    assert values["mode"] in CHART_MODES
    assert values["image"]["repository"].startswith("ghcr.io/open-telemetry/opentelemetry-collector-releases/")
    distribution = values["command"]["name"].replace("otelcol", "opentelemetry-collector")  # otelcol-k8s -> ...-k8s
    assert values["image"]["repository"].endswith(distribution)
    config = values["config"]
    pipelines = config["service"]["pipelines"]
    for signal in ("traces", "logs"):  # logs too: GenAI content may travel on log records
        pipeline = pipelines[signal]
        assert exporter in pipeline["exporters"] and "debug" in pipeline["exporters"]  # lists replace the defaults
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline[kind]:
                assert component in config.get(kind, {}) or component in DEFAULT_COMPONENTS[kind], component
    exporter_config: dict[str, Any] = config["exporters"][exporter]
    return exporter_config


def test_otlp_values_forward_traces_and_logs_to_evalds_service() -> None:
    exporter = check_chart_values(load("values-otlp.yaml"), "otlp_grpc/evald")
    # the chart's Service for release "evald" in namespace "observability", its OTLP gRPC port
    assert exporter["endpoint"] == "evald.observability.svc.cluster.local:4317"
    assert exporter["tls"] == {"insecure": True}
    assert exporter["retry_on_failure"]["enabled"] is True and exporter["sending_queue"]["enabled"] is True
    assert load("values-otlp.yaml")["image"]["repository"].endswith("opentelemetry-collector-k8s")


def test_otlp_values_explain_the_older_otlp_name() -> None:
    text = (COLLECTOR / "values-otlp.yaml").read_text(encoding="utf-8")
    assert "since Collector v0.144.0" in text and "`otlp/evald:`" in text and "deprecated alias" in text


def test_kafka_values_key_by_trace_id_on_the_topics_evald_reads() -> None:
    exporter = check_chart_values(load("values-kafka.yaml"), "kafka")
    assert load("values-kafka.yaml")["image"]["repository"].endswith("opentelemetry-collector-contrib")
    assert exporter["partition_traces_by_id"] is True
    assert exporter["traces"] == {"topic": "otlp_spans", "encoding": "otlp_proto"}
    assert exporter["logs"] == {"topic": "otlp_logs", "encoding": "otlp_proto"}
    scorer = yaml.safe_load(SCORER_VALUES.read_text(encoding="utf-8"))
    assert scorer["mode"] == "kafka-scorer"
    receiver = KafkaReceiverConfig.model_validate(scorer["config"]["receivers"]["kafka"])
    assert receiver.brokers == exporter["brokers"]
    assert receiver.traces is not None and receiver.logs is not None
    assert (receiver.traces.topic, receiver.traces.encoding) == ("otlp_spans", "otlp_proto")
    assert (receiver.logs.topic, receiver.logs.encoding) == ("otlp_logs", "otlp_proto")
    # a record the Collector may write must fit what evald accepts, or it is skipped as poison
    assert exporter["producer"]["max_message_bytes"] <= receiver.max_record_size


def test_kafka_scorer_values_render_a_config_evald_accepts(tmp_path: Path) -> None:
    values = yaml.safe_load(SCORER_VALUES.read_text(encoding="utf-8"))
    configmap = yaml.safe_load(render_chart(values)["evald/templates/configmap.yaml"])
    result = evald_validate(tmp_path, configmap["data"]["config.yaml"])
    assert result.returncode == 0, result.stdout + result.stderr


def doc_yaml_blocks() -> list[Any]:
    text = (ROOT / "docs" / "collector.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)]


def test_collector_doc_snippets_parse_and_match_the_chart() -> None:
    blocks = doc_yaml_blocks()
    assert len(blocks) >= 5
    chart_values = yaml.safe_load((ROOT / "helm" / "evald" / "values.yaml").read_text(encoding="utf-8"))
    (adapter,) = [b for b in blocks if "rules" in b]
    (rule,) = adapter["rules"]["external"]
    metric = chart_values["autoscaling"]["kafkaLag"]["metricName"]
    assert rule["name"]["as"] == metric and rule["seriesQuery"].startswith(f"{metric}{{")
    assert rule["metricsQuery"].startswith("sum by (<<.GroupBy>>) (<<.Series>>{<<.LabelMatchers>>})")
    assert rule["resources"]["overrides"]["namespace"] == {"resource": "namespace"}
    (secured,) = [b for b in blocks if "tls" in b and "auth" in b]  # the evald values with TLS and a token
    for transport in ("grpc", "http"):
        receiver = secured["config"]["receivers"]["otlp"][transport]
        assert receiver["tls"] == {"cert_file": "/etc/evald/tls/tls.crt", "key_file": "/etc/evald/tls/tls.key",
                                   "client_ca_file": "/etc/evald/tls/ca.crt"}
        assert receiver["auth"] == {"token_files": ["/etc/evald/auth/token"]}


def headless_service(values: dict[str, Any]) -> dict[str, Any]:
    """The headless Service the chart renders for ``values`` (release "evald", namespace "observability")."""
    rendered = render_chart(values)["evald/templates/service-headless.yaml"]
    service: dict[str, Any] = yaml.safe_load(rendered)
    assert service["spec"]["clusterIP"] == "None"
    return service


def test_loadbalancing_values_resolve_evalds_headless_service() -> None:
    values = load("values-loadbalancing.yaml")
    exporter = check_chart_values(values, "loadbalancing/evald")
    assert values["image"]["repository"].endswith("opentelemetry-collector-k8s")  # has the loadbalancing exporter
    assert exporter["routing_key"] == "traceID"  # logs would default to routing by service
    service = headless_service({"replicaCount": 3, "service": {"headless": {"enabled": True}}})
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    dns = exporter["resolver"]["dns"]
    assert set(exporter["resolver"]) == {"dns"}
    assert dns["hostname"] == f"{name}.{namespace}.svc.cluster.local"
    assert (name, namespace) == ("evald-headless", "observability")
    grpc_port = {p["name"]: p["port"] for p in service["spec"]["ports"]}["otlp-grpc"]
    assert dns["port"] == grpc_port == 4317
    otlp = exporter["protocol"]["otlp"]
    assert "endpoint" not in otlp and otlp["tls"] == {"insecure": True}
    assert exporter["retry_on_failure"]["enabled"] is True and exporter["sending_queue"]["enabled"] is True


def test_loadbalancing_port_is_the_container_port_even_when_the_service_ports_move() -> None:
    exporter = check_chart_values(load("values-loadbalancing.yaml"), "loadbalancing/evald")
    moved = headless_service({"service": {"headless": {"enabled": True}, "ports": {
        "otlpGrpc": 14317, "otlpHttp": 14318, "metrics": 19464}}})
    assert {p["name"]: p["port"] for p in moved["spec"]["ports"]}["otlp-grpc"] == exporter["resolver"]["dns"]["port"]


def test_collector_doc_shows_the_loadbalancing_values_and_the_reference_mount() -> None:
    blocks = doc_yaml_blocks()
    (documented,) = [b["exporters"]["loadbalancing/evald"] for b in blocks
                     if "loadbalancing/evald" in b.get("exporters", {})]
    assert documented == load("values-loadbalancing.yaml")["config"]["exporters"]["loadbalancing/evald"]
    (mounting,) = [b for b in blocks if "extraVolumes" in b]
    example = yaml.safe_load((ROOT / "helm" / "evald" / "examples" / "values-goldens-policy.yaml").read_text())
    assert {k: mounting[k] for k in ("extraVolumes", "extraVolumeMounts", "config")} == {
        k: example[k] for k in ("extraVolumes", "extraVolumeMounts", "config")}
