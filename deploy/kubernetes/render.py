"""Render the Helm chart into plain Kubernetes manifests (``python deploy/kubernetes/render.py``).

Writes deploy/kubernetes/standalone.yaml and deploy/kubernetes/kafka-scorer.yaml from helm/evald with the values in
values-<name>.yaml beside them, through Helm's own Go SDK (helm-python-sdk; no helm binary). For people who apply
manifests with kubectl or kustomize instead of Helm. tests/deploy/test_kubernetes_manifests.py fails when a file is
stale: re-run this script after changing the chart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = ROOT / "helm" / "evald"
HERE = ROOT / "deploy" / "kubernetes"
RELEASE, NAMESPACE = "evald", "observability"
VARIANTS = ("standalone", "kafka-scorer")
HEADER = """\
# evald, mode {variant}: generated from the Helm chart helm/evald with deploy/kubernetes/values-{variant}.yaml
# (release "{release}", namespace "{namespace}") by `python deploy/kubernetes/render.py`. Do not edit: change the
# chart or the values and re-render. Apply: kubectl create namespace {namespace}; kubectl apply -f {file}
"""


def values(variant: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((HERE / f"values-{variant}.yaml").read_text(encoding="utf-8"))
    return loaded


def render(variant: str) -> str:
    """The manifests of one variant as one multi-document YAML text (templates in name order, NOTES left out)."""
    import helm_python

    chart = helm_python.Chart.load(str(CHART_DIR))
    try:
        rendered: dict[str, str] = chart.render(values(variant), name=RELEASE, namespace=NAMESPACE)
    finally:
        chart.close()
    docs = [
        f"# Source: {path}\n{text.strip()}\n"
        for path, text in sorted(rendered.items())
        if not path.endswith(".txt") and text.strip()
    ]
    header = HEADER.format(variant=variant, release=RELEASE, namespace=NAMESPACE,
                           file=f"deploy/kubernetes/{variant}.yaml")
    return header + "---\n" + "---\n".join(docs)


def main() -> None:
    for variant in VARIANTS:
        target = HERE / f"{variant}.yaml"
        target.write_text(render(variant), encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
