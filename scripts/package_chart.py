"""Package helm/evald for a chart repository: the chart .tgz and the repository's index.yaml (Helm's Go SDK through
helm-python-sdk; no helm binary).

    python scripts/package_chart.py --out dist/chart \
        --base-url https://github.com/OWNER/evald/releases/download/v0.1.0 \
        --image-repository ghcr.io/OWNER/evald --merge gh-pages/index.yaml --expect-app-version 0.1.0

Steps, each failing the run (exit 1, the reason on stderr) rather than publishing a broken chart:

1. a copy of the chart with ``image.repository`` set to ``--image-repository`` (the published image; the chart in
   the repository keeps ``evald``, an image built locally), comments and everything else kept;
2. ``helm lint --strict`` on the copy (errors and warnings fail);
3. the chart's ``appVersion`` must equal ``--expect-app-version`` (the release tag without ``v``), so the chart's
   default image tag is the image the same release pushes;
4. ``helm package`` into ``--out``, then ``helm repo index`` of ``--out`` with ``--base-url`` (where the .tgz will be
   downloaded from: the GitHub release's assets) merged with ``--merge`` (the index already published, whose
   entries keep their own URLs); a version already in that index is refused (a chart version is published once).

Prints the archive, its digest and the index path. tests/deploy/test_package_chart.py runs it.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHART_DIR = ROOT / "helm" / "evald"
# the one `repository:` line of the `image:` block in values.yaml (its comment is kept)
_IMAGE_REPOSITORY = re.compile(r"^(image:\n(?:[ \t]*#.*\n)*  repository: )(\S+)", re.MULTILINE)


class PackagingError(Exception):
    """A check failed: nothing is written to --out."""


def set_image_repository(values_text: str, repository: str) -> str:
    replaced, count = _IMAGE_REPOSITORY.subn(lambda m: m.group(1) + repository, values_text, count=1)
    if count != 1:
        raise PackagingError("values.yaml: no `image:` block starting with `repository:` to set")
    return replaced


def lint(chart_dir: Path) -> None:
    import helm_python

    report: dict[str, Any] = helm_python.lint(str(chart_dir), strict=True, namespace="default")
    problems = [m["error"] for m in report["messages"] if m["severity"] >= 2] + list(report["errors"])
    if problems:
        raise PackagingError("helm lint --strict:\n  " + "\n  ".join(problems))


def package(out: Path, base_url: str, image_repository: str | None = None, merge: Path | None = None,
            expect_app_version: str | None = None, chart_dir: Path = CHART_DIR) -> tuple[Path, dict[str, Any]]:
    """(the chart archive, the index written to ``out/index.yaml``)."""
    import helm_python

    chart_meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text(encoding="utf-8"))
    name, version, app_version = chart_meta["name"], str(chart_meta["version"]), str(chart_meta["appVersion"])
    if expect_app_version is not None and app_version != expect_app_version:
        raise PackagingError(f"Chart.yaml appVersion is {app_version!r}, the release is {expect_app_version!r}: "
                             "the chart's default image tag would not be this release's image")
    if merge is not None and merge.exists():
        published = yaml.safe_load(merge.read_text(encoding="utf-8")) or {}
        if version in {str(e["version"]) for e in published.get("entries", {}).get(name, [])}:
            raise PackagingError(f"chart {name} {version} is already in {merge}: bump `version` in Chart.yaml")
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / name
        shutil.copytree(chart_dir, copy)
        if image_repository:
            values = copy / "values.yaml"
            values.write_text(set_image_repository(values.read_text(encoding="utf-8"), image_repository),
                              encoding="utf-8")
        lint(copy)
        out.mkdir(parents=True, exist_ok=True)
        archive = Path(helm_python.package(str(copy), destination=str(out)))
    index: dict[str, Any] = helm_python.repo_index_generate(
        str(out), base_url=base_url.rstrip("/"), merge=str(merge) if merge is not None and merge.exists() else None)
    return archive, index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for the .tgz and index.yaml")
    parser.add_argument("--base-url", required=True, help="URL the .tgz is downloaded from (without the file name)")
    parser.add_argument("--image-repository", help="image.repository of the packaged chart, e.g. ghcr.io/OWNER/evald")
    parser.add_argument("--merge", type=Path, help="the chart repository's current index.yaml, if any")
    parser.add_argument("--expect-app-version", help="the release's version: Chart.yaml appVersion must equal it")
    args = parser.parse_args(argv)
    try:
        archive, index = package(args.out, args.base_url, args.image_repository, args.merge, args.expect_app_version)
    except PackagingError as err:
        print(f"package_chart: {err}", file=sys.stderr)
        return 1
    import helm_python

    print(f"chart   {archive} ({helm_python.digest(str(archive))})")
    print(f"index   {args.out / 'index.yaml'} ({sum(len(v) for v in index['entries'].values())} chart versions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
