from __future__ import annotations

import json
from pathlib import Path

from evald.metrics.catalog import list_rows, render_markdown, render_table
from evald.metrics.registry import BUILTIN_METRICS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_docs_metrics_md_is_up_to_date() -> None:
    current = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    assert current.rstrip("\n") == render_markdown().rstrip("\n"), (
        "docs/metrics.md is stale: run python -m evald.metrics.catalog > docs/metrics.md"
    )


def test_list_rows_describes_every_registered_metric() -> None:
    rows = list_rows()
    kinds = [row["kind"] for row in rows]
    assert set(BUILTIN_METRICS) <= set(kinds) and kinds == sorted(kinds)
    json.dumps(rows)  # JSON-ready for `evald list-metrics --format json`
    by_kind = {row["kind"]: row for row in rows}
    latency = by_kind["latency"]
    assert latency["family"] == "operational" and latency["dimension"] == "performance"
    assert latency["requires"] == ["latency_ms"] and "max_ms" in latency["options"]
    assert by_kind["error_free"]["options"] == []
    for row in rows:
        assert set(row) >= {"kind", "family", "dimension", "default_threshold", "version", "requires", "summary",
                            "options"}


def test_render_table_is_aligned() -> None:
    rows = list_rows()
    lines = render_table(rows).splitlines()
    assert len(lines) == len(rows) + 2
    assert lines[0].split() == ["kind", "family", "dimension", "threshold", "version", "requires", "needs", "summary"]
    starts = [line.index(rows[i]["family"], len(rows[i]["kind"])) for i, line in enumerate(lines[2:])]
    assert len(set(starts)) == 1, "the family column must line up"


def test_render_markdown_has_one_section_per_metric_with_an_options_table() -> None:
    text = render_markdown()
    for kind in BUILTIN_METRICS:
        assert f"\n## {kind}\n" in text
    assert "| `max_ms` | float | required |" in text
    assert '| `mode` | "step" \\| "linear" | `"step"` |' in text
    assert "| `case_sensitive` | bool | `true` |" in text
