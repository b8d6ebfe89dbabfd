"""Shared by the chart tests: render helm/evald with Helm's Go SDK (helm-python-sdk) and `evald validate` a config."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHART_DIR = ROOT / "helm" / "evald"
RELEASE, NAMESPACE = "evald", "observability"
# the oldest Kubernetes the chart supports (Chart.yaml kubeVersion >=1.23; kubernetes-validate's oldest schema is
# 1.25) and the newest kubernetes-validate knows
KUBE_VERSIONS = ["1.25", "1.37"]
# the Prometheus Operator kinds kubernetes-validate has no schema for: their structure is checked instead
CRD_KINDS = {"ServiceMonitor", "PrometheusRule"}


def render_chart(values: dict[str, Any] | None = None) -> dict[str, str]:
    """Template path -> rendered text for release RELEASE in NAMESPACE (loads and closes the chart)."""
    import helm_python

    chart = helm_python.Chart.load(str(CHART_DIR))
    try:
        rendered: dict[str, str] = chart.render(copy.deepcopy(values or {}), name=RELEASE, namespace=NAMESPACE)
    finally:
        chart.close()
    return rendered


def evald_validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    """`evald validate` on ``text`` written to a file, in a subprocess as the container runs it."""
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "evald", "validate", "--config", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
