"""Which evald modules the build compiles with mypyc (setup.py), and whether this installation runs them compiled.

``COMPILED_MODULES`` is the one list setup.py compiles. ``compiled()`` says which of them are loaded from a C
extension in this process (reported as the ``compiled`` label of ``evald_build_info`` and by ``evald version``).
``stale_modules()`` lists compiled modules whose ``.py`` source is newer than the extension beside it: in an
editable install the extension shadows the edited source until ``pip install -e .`` runs again; the test suite
refuses to run on them. Nothing here imports the modules it names, except ``compiled()``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
from pathlib import Path
from typing import Final

#: pure, hot modules only: no pydantic models, no asyncio, no classes meant to be subclassed by users
COMPILED_MODULES: Final[tuple[str, ...]] = (
    "evald.semconv",
    "evald.span_reads",
    "evald.assembly.estimates",
    "evald.receivers.convert",
    "evald.receivers.wire",
    "evald.receivers.wire_traces",
    "evald.receivers.wire_logs",
    "evald.receivers.wire_ids",
    "evald.exporters.prometheus_table",
    *(f"evald.mapping.{name}" for name in (
        "case_parts", "content_capture", "genai_calls", "genai_semconv", "instrumentations", "langfuse", "masking",
        "mcp", "messages", "openinference",
        "openinference_calls", "openinference_fields", "openinference_payloads", "openinference_tools",
        "openllmetry", "openllmetry_attrs", "openllmetry_calls", "openllmetry_entities", "openllmetry_retrieval",
        "openllmetry_tools", "router", "sdk_reprs", "values", "vendor_payloads",
    )),
)

_PACKAGE_ROOT: Final = Path(__file__).resolve().parent.parent
_EXTENSION_SUFFIXES: Final = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _source_of(module: str) -> Path:
    return _PACKAGE_ROOT / (module.replace(".", "/") + ".py")


def _extension_of(module: str) -> Path | None:
    source = _source_of(module)
    for suffix in _EXTENSION_SUFFIXES:
        candidate = source.with_suffix(suffix)
        if candidate.exists():
            return candidate
    return None


def compiled() -> list[str]:
    """The modules of ``COMPILED_MODULES`` this process runs from a C extension."""
    out = []
    for name in COMPILED_MODULES:
        origin = getattr(importlib.import_module(name), "__file__", "") or ""
        if origin.endswith(_EXTENSION_SUFFIXES):
            out.append(name)
    return out


def stale_modules() -> list[str]:
    """Compiled modules whose source changed after their extension was built (editable installs)."""
    stale = []
    for name in COMPILED_MODULES:
        extension = _extension_of(name)
        source = _source_of(name)
        if extension is not None and source.exists() and source.stat().st_mtime > extension.stat().st_mtime:
            stale.append(name)
    return stale
