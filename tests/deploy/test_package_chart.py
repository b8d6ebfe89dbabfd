"""scripts/package_chart.py: the chart archive and repository index a release publishes (release.yml, job chart)."""

from __future__ import annotations

import importlib.util
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import CHART_DIR, NAMESPACE, RELEASE, ROOT

helm_python = pytest.importorskip("helm_python")

BASE = "https://github.com/acme/evald/releases/download/v0.1.0"
IMAGE = "ghcr.io/acme/evald"
CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text(encoding="utf-8"))


def script() -> Any:
    """scripts/package_chart.py as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("package_chart", ROOT / "scripts" / "package_chart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(args: list[str]) -> int:
    code: int = script().main(args)
    return code


def member(archive: Path, name: str) -> str:
    with tarfile.open(archive) as tar:
        extracted = tar.extractfile(f"evald/{name}")
        assert extracted is not None
        return extracted.read().decode("utf-8")


def test_package_writes_the_archive_and_an_index_pointing_at_the_release(tmp_path: Path) -> None:
    out = tmp_path / "chart"
    assert run(["--out", str(out), "--base-url", BASE, "--image-repository", IMAGE,
                "--expect-app-version", str(CHART["appVersion"])]) == 0
    archive = out / f"evald-{CHART['version']}.tgz"
    index = yaml.safe_load((out / "index.yaml").read_text(encoding="utf-8"))
    (entry,) = index["entries"]["evald"]
    assert entry["version"] == CHART["version"] and entry["appVersion"] == CHART["appVersion"]
    assert entry["urls"] == [f"{BASE}/{archive.name}"]
    assert "sha256:" + entry["digest"] == helm_python.digest(str(archive))
    values = member(archive, "values.yaml")
    assert yaml.safe_load(values)["image"]["repository"] == IMAGE
    # only that line changed: comments and every other value as in the repository
    original = (CHART_DIR / "values.yaml").read_text(encoding="utf-8")
    assert values == original.replace("  repository: evald\n", f"  repository: {IMAGE}\n", 1)
    assert member(archive, "templates/service-headless.yaml") == (
        CHART_DIR / "templates" / "service-headless.yaml").read_text(encoding="utf-8")
    # the published chart installs the published image at the release's tag
    loaded = helm_python.Chart.load(str(archive))
    try:
        rendered = loaded.render({}, name=RELEASE, namespace=NAMESPACE)
    finally:
        loaded.close()
    deployment = yaml.safe_load(rendered["evald/templates/deployment.yaml"])
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"{IMAGE}:{CHART['appVersion']}"


def test_index_keeps_the_published_versions_and_refuses_a_republish(tmp_path: Path, capsys: Any) -> None:
    published = tmp_path / "published.yaml"
    old = {"apiVersion": "v2", "appVersion": "0.0.9", "name": "evald", "version": "0.1.0", "digest": "ab" * 32,
           "urls": ["https://github.com/acme/evald/releases/download/v0.0.9/evald-0.1.0.tgz"],
           "created": "2026-01-01T00:00:00Z"}
    published.write_text(yaml.safe_dump({"apiVersion": "v1", "entries": {"evald": [old]},
                                         "generated": "2026-01-01T00:00:00Z"}), encoding="utf-8")
    out = tmp_path / "chart"
    assert run(["--out", str(out), "--base-url", BASE, "--merge", str(published)]) == 0
    entries = yaml.safe_load((out / "index.yaml").read_text(encoding="utf-8"))["entries"]["evald"]
    assert {e["version"]: e["urls"] for e in entries} == {
        "0.1.0": old["urls"], CHART["version"]: [f"{BASE}/evald-{CHART['version']}.tgz"]}
    republish = tmp_path / "republish"
    assert run(["--out", str(republish), "--base-url", BASE, "--merge", str(out / "index.yaml")]) == 1
    assert f"chart evald {CHART['version']} is already in" in capsys.readouterr().err
    assert not republish.exists()


def test_a_release_whose_version_is_not_the_charts_app_version_is_refused(tmp_path: Path, capsys: Any) -> None:
    assert run(["--out", str(tmp_path / "x"), "--base-url", BASE, "--expect-app-version", "9.9.9"]) == 1
    assert "appVersion is" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_a_chart_that_fails_strict_lint_is_not_packaged(tmp_path: Path) -> None:
    module = script()
    broken = tmp_path / "evald"
    shutil.copytree(CHART_DIR, broken)
    (broken / "templates" / "service.yaml").write_text("{{ .Values.nope.missing }}\n", encoding="utf-8")
    with pytest.raises(module.PackagingError, match="helm lint --strict"):
        module.package(tmp_path / "out", BASE, chart_dir=broken)
    assert not (tmp_path / "out").exists()
