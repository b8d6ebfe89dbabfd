"""The mypyc build (setup.py, evald/native.py): CI tests the compiled modules, and they map the corpus exactly as
their pure-Python sources do."""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evald
import evald.native as native
from tests.mapping.mapping_dump import dump

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "testdata" / "corpus"


def test_this_build_runs_every_listed_module_compiled() -> None:
    """A compile failure is only a warning at install time (optional extensions): this is where it shows."""
    if os.environ.get("EVALD_PURE_PYTHON"):
        assert native.compiled() == []
    else:
        assert native.compiled() == list(native.COMPILED_MODULES)


def test_compiled_mapping_equals_the_pure_python_sources_on_the_corpus(tmp_path: Path) -> None:
    package = Path(evald.__file__).parent
    for source in package.rglob("*"):  # the sources only: no extension modules
        if source.is_file() and not source.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            target = tmp_path / "evald" / source.relative_to(package)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "mapping" / "mapping_dump.py"), str(CORPUS)],
        env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=300, check=True,
    )
    ran, _, document = result.stdout.partition("\n")
    assert ran.startswith(str(tmp_path)) and ran.endswith(".py")
    pure = json.loads(document)
    here = json.loads(json.dumps(dump(CORPUS), sort_keys=True, default=repr))
    assert len(here) >= 47 and sum(len(v["cases"]) for v in here.values()) > 80
    assert pure == here


def test_stale_modules_are_sources_newer_than_their_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "evald" / "mapping").mkdir(parents=True)
    for module, source_newer in (("evald/semconv", True), ("evald/mapping/values", False)):
        source, extension = tmp_path / f"{module}.py", tmp_path / f"{module}{suffix}"
        source.write_text("")
        extension.write_bytes(b"")
        older, newer = (extension, source) if source_newer else (source, extension)
        os.utime(older, (1_000_000, 1_000_000))
        os.utime(newer, (2_000_000, 2_000_000))
    (tmp_path / "evald" / "receivers").mkdir()
    (tmp_path / "evald" / "receivers" / "convert.py").write_text("")  # not compiled at all: not stale
    monkeypatch.setattr(native, "_PACKAGE_ROOT", tmp_path)
    assert native.stale_modules() == ["evald.semconv"]
