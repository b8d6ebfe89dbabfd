"""docs/configuration.md is generated from the config models and must not drift from them."""

from __future__ import annotations

from pathlib import Path

from evald.config.reference import render_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_configuration_reference_is_current() -> None:
    current = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert current == render_markdown(), "run: python -m evald.config.reference > docs/configuration.md"


def test_every_table_row_has_four_cells() -> None:
    for line in render_markdown().splitlines():
        if line.startswith("| `"):
            cells = line.replace("\\|", "").split("|")[1:-1]
            assert len(cells) == 4, line


def test_every_documented_key_has_a_note() -> None:
    rows = [line for line in render_markdown().splitlines() if line.startswith("| `")]
    assert rows
    missing = [row.split("|")[1].strip() for row in rows if row.rstrip().endswith("|  |")]
    assert not missing, f"config keys without a description: {missing}"
