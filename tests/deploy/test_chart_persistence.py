"""The chart's optional PersistentVolumeClaim (values ``persistence``) for the receivers' write-ahead log and the
exporters' persistent sending queue: the claim, its writable mount, strategy Recreate, the single-replica rule and
the NOTES warning while the config keeps nothing on it.

Lint, schema and strict kubernetes-validate of the options run in test_helm_chart.py (OPTIONS ``persistence`` and
``persistence-existing-claim``, its BAD_VALUES and BAD_COMBINATIONS); this module checks what they render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import NAMESPACE, evald_validate
from tests.deploy.test_helm_chart import OPTIONS, by_kind, container_of, manifests, render, rendered_config

helm_python = pytest.importorskip("helm_python")

ON_DISK: dict[str, Any] = {  # everything evald can keep on disk, below the default mountPath
    "receivers": {"otlp": {"wal": {"directory": "/var/lib/evald/wal"}}},
    "exporters": {"otlp": {"endpoint": "collector:4317",
                           "sending_queue": {"storage": {"directory": "/var/lib/evald/queue"}}}},
}


@pytest.fixture(scope="module")
def chart() -> Any:
    from tests.deploy.chart import CHART_DIR

    loaded = helm_python.Chart.load(str(CHART_DIR))
    yield loaded
    loaded.close()


def data_volume(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pod's ``data`` volume and the container's mount of it."""
    pod = by_kind(docs, "Deployment")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "data"]
    (mount,) = [m for m in container_of(docs)["volumeMounts"] if m["name"] == "data"]
    return volume, mount


def test_a_claim_is_created_and_mounted_writable_one_pod_at_a_time(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["persistence"][0]))
    claim = by_kind(docs, "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "evald-data" and claim["metadata"]["namespace"] == NAMESPACE
    assert claim["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert claim["spec"] == {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-ssd",
                             "resources": {"requests": {"storage": "5Gi"}}}
    volume, mount = data_volume(docs)
    assert volume["persistentVolumeClaim"] == {"claimName": "evald-data"}
    assert mount == {"name": "data", "mountPath": "/var/lib/evald"}  # writable (readOnly unset)
    deployment = by_kind(docs, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}  # the old pod releases the files first
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["template"]["spec"]["securityContext"]["fsGroup"] == 10001  # evald's group may write
    assert by_kind(docs, "Deployment")["metadata"]["labels"].items() <= claim["metadata"]["labels"].items()


def test_an_existing_claim_is_mounted_and_none_is_created(chart: Any) -> None:
    docs = manifests(render(chart, OPTIONS["persistence-existing-claim"][0]))
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    volume, mount = data_volume(docs)
    assert volume["persistentVolumeClaim"] == {"claimName": "evald-queue"} and mount["mountPath"] == "/data"


@pytest.mark.parametrize(("storage_class", "rendered"), [(None, {}), ("", {"storageClassName": ""}),
                                                         ("gp3", {"storageClassName": "gp3"})])
def test_storage_class_null_is_the_default_class_and_empty_is_none(chart: Any, storage_class: str | None,
                                                                   rendered: dict[str, str]) -> None:
    claim = by_kind(manifests(render(chart, {"persistence": {"enabled": True, "storageClassName": storage_class}})),
                    "PersistentVolumeClaim")
    assert {k: v for k, v in claim["spec"].items() if k == "storageClassName"} == rendered


def test_off_by_default(chart: Any) -> None:
    docs = manifests(render(chart))
    deployment = by_kind(docs, "Deployment")
    assert "strategy" not in deployment["spec"]  # rolling updates as before
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert {v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]} == {"config", "tmp"}


def test_notes_warn_until_the_config_keeps_its_files_on_the_volume(chart: Any) -> None:
    unused = render(chart, {"persistence": {"enabled": True}})["evald/templates/NOTES.txt"]
    assert "PersistentVolumeClaim evald-data is mounted at /var/lib/evald" in unused
    assert "WARNING: the config keeps nothing under /var/lib/evald" in unused
    used = render(chart, {"persistence": {"enabled": True}, "config": ON_DISK})["evald/templates/NOTES.txt"]
    assert "PersistentVolumeClaim evald-data" in used and "keeps nothing" not in used
    assert "PersistentVolumeClaim" not in render(chart)["evald/templates/NOTES.txt"]


def test_evald_accepts_a_config_keeping_the_log_and_the_queue_on_the_volume(chart: Any, tmp_path: Path) -> None:
    values = {"persistence": {"enabled": True}, "config": ON_DISK}
    text = rendered_config(chart, values)
    config = yaml.safe_load(text)
    mount = data_volume(manifests(render(chart, values)))[1]["mountPath"]
    directories = [config["receivers"]["otlp"]["wal"]["directory"],
                   config["exporters"]["otlp"]["sending_queue"]["storage"]["directory"]]
    assert all(d.startswith(f"{mount}/") for d in directories)
    result = evald_validate(tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr
