"""A goldens file and an `args_valid` policy file mounted from a ConfigMap are read by evald (issue 20).

The chart is rendered with helm/evald/examples/values-goldens-policy.yaml; the pod's filesystem is then built under
a temporary directory from the rendered pod spec alone: for every volumeMount of the evald container, the files its
volume holds (the chart's ConfigMap for /etc/evald, the example ConfigMap `evald-references` built from
helm/evald/examples/ exactly as `kubectl create configmap --from-file` would) are written at <root>/<mountPath>.
evald then validates the rendered config.yaml, with each absolute path in it read at <root>/<path> when it lies under
a mount (so a path that matches no mount is not found, and the load fails as it would in the pod).
"""

from __future__ import annotations

import copy
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from evald.config.loader import parse_config
from evald.metrics.agent.args_valid import ArgsValidOptions
from evald.pipeline.goldens import load_goldens
from tests.deploy.chart import CHART_DIR, evald_validate
from tests.deploy.test_helm_chart import by_kind, container_of, manifests, render

helm_python = pytest.importorskip("helm_python")

EXAMPLES = CHART_DIR / "examples"
VALUES = yaml.safe_load((EXAMPLES / "values-goldens-policy.yaml").read_text(encoding="utf-8"))
# what `kubectl create configmap evald-references --from-file=goldens.jsonl=... --from-file=args-policy.yaml=...`
# (the command in the values file) creates
REFERENCES = {"evald-references": {name: (EXAMPLES / name).read_text(encoding="utf-8")
                                   for name in ("goldens.jsonl", "args-policy.yaml")}}


@pytest.fixture(scope="module")
def chart() -> Any:
    loaded = helm_python.Chart.load(str(CHART_DIR))
    yield loaded
    loaded.close()


def config_map_files(data: dict[str, str], items: list[dict[str, str]] | None) -> dict[str, str]:
    if items is None:
        return dict(data)
    return {item["path"]: data[item["key"]] for item in items}


def volume_files(volume: dict[str, Any], config_maps: dict[str, dict[str, str]]) -> dict[str, str]:
    """Relative path -> content of what a volume shows (configMap, projected configMaps; Secrets are absent here)."""
    if "configMap" in volume:
        source = volume["configMap"]
        return config_map_files(config_maps[source["name"]], source.get("items"))
    if "projected" in volume:
        files: dict[str, str] = {}
        for source in volume["projected"]["sources"]:
            if "configMap" in source:
                files |= config_map_files(config_maps[source["configMap"]["name"]], source["configMap"].get("items"))
        return files
    assert "emptyDir" in volume, f"no stand-in for volume {volume}"
    return {}


def build_pod_filesystem(docs: list[dict[str, Any]], root: Path, external: dict[str, dict[str, str]]) -> list[str]:
    """Writes the evald container's mounted files under ``root``; returns the mount paths."""
    config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"} | external
    volumes = {v["name"]: v for v in by_kind(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    mounts = []
    for mount in container_of(docs)["volumeMounts"]:
        target = root / mount["mountPath"].lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        for relative, content in volume_files(volumes[mount["name"]], config_maps).items():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            (target / relative).write_text(content, encoding="utf-8")
        mounts.append(mount["mountPath"])
    return mounts


def in_pod(value: Any, root: Path, mounts: list[str]) -> Any:
    """The config with every absolute path under a mount moved under ``root``; other values unchanged."""
    if isinstance(value, dict):
        return {key: in_pod(item, root, mounts) for key, item in value.items()}
    if isinstance(value, list):
        return [in_pod(item, root, mounts) for item in value]
    if isinstance(value, str) and value.startswith("/") and any(
            PurePosixPath(value).is_relative_to(mount) for mount in mounts):
        return str(root / value.lstrip("/"))
    return value


def pod_config(chart: Any, values: dict[str, Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(the config text as the pod sees it, with pod paths moved under root; the parsed original)."""
    docs = manifests(render(chart, values))
    mounts = build_pod_filesystem(docs, root, REFERENCES)
    assert container_of(docs)["args"][:3] == ["run", "--config", "/etc/evald/config.yaml"]
    original: dict[str, Any] = yaml.safe_load((root / "etc/evald/config.yaml").read_text(encoding="utf-8"))
    return yaml.safe_dump(in_pod(original, root, mounts), sort_keys=False), original


def test_mounted_goldens_and_policy_are_where_the_config_reads_them(chart: Any, tmp_path: Path) -> None:
    text, original = pod_config(chart, VALUES, tmp_path)
    goldens_path = original["goldens"]["file"]
    (args_valid,) = [m for m in original["metrics"] if m["kind"] == "args_valid"]
    policy_path = args_valid["options"]["policy_file"]
    assert goldens_path == "/etc/evald-references/goldens.jsonl"
    assert policy_path == "/etc/evald-references/args-policy.yaml"
    # the files in the pod are the ConfigMap's keys, byte for byte
    for path, key in ((goldens_path, "goldens.jsonl"), (policy_path, "args-policy.yaml")):
        assert (tmp_path / path.lstrip("/")).read_text(encoding="utf-8") == REFERENCES["evald-references"][key]
    result = evald_validate(tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr
    # what evald loaded from them (the config as `evald run` parses it, with the pod's environment: none)
    config = parse_config(text, source="config.yaml", environ={})
    assert config.root.goldens.file is not None
    assert len(load_goldens(config.root.goldens.file)) == 2
    assert len(REFERENCES["evald-references"]["goldens.jsonl"].splitlines()) == 2
    (spec,) = [m for m in config.metrics if m.kind == "args_valid"]
    options = ArgsValidOptions.model_validate(spec.options)
    assert options.policy_file is not None
    assert options.policy_file.loaded_from == str(tmp_path / policy_path.lstrip("/"))
    policy = yaml.safe_load(REFERENCES["evald-references"]["args-policy.yaml"])
    assert set(options.policy_file.tools) == set(policy["tools"]) == {"apply_discount", "lookup_order"}

@pytest.mark.parametrize(("change", "message"), [
    (lambda v: v["extraVolumeMounts"][0].update(mountPath="/etc/evald-refs"), "cannot read goldens file"),
    (lambda v: v["config"]["goldens"].update(file="/etc/evald-references/goldens.json"), "cannot read goldens file"),
    (lambda v: v["config"]["metrics"][2]["options"].update(policy_file="/etc/evald-references/policy.yaml"),
     "cannot read policy file"),
], ids=["mount-moved", "goldens-key-renamed", "policy-key-renamed"])
def test_a_path_that_misses_the_mount_fails_the_load(chart: Any, tmp_path: Path, change: Any, message: str) -> None:
    values = copy.deepcopy(VALUES)
    change(values)
    text, _ = pod_config(chart, values, tmp_path)
    result = evald_validate(tmp_path, text)
    assert result.returncode != 0 and message in result.stdout + result.stderr


def test_the_reference_mount_is_read_only_and_beside_the_config(chart: Any) -> None:
    docs = manifests(render(chart, VALUES))
    mounts = {m["mountPath"]: m for m in container_of(docs)["volumeMounts"]}
    assert mounts["/etc/evald-references"] == {"name": "references", "mountPath": "/etc/evald-references",
                                               "readOnly": True}
    assert mounts["/etc/evald"]["readOnly"] is True
    volumes = {v["name"]: v for v in by_kind(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["references"] == {"name": "references", "configMap": {"name": "evald-references"}}
