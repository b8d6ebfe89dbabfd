"""ruff and mypy are part of the suite, so a lint or type error fails CI like any other test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    result = run("ruff", "check", "evald", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_modules_stay_small() -> None:
    too_long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in (ROOT / "evald").rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 330
    ]
    assert not too_long, too_long
