"""Build hook: compile evald's hot, pure modules to C extensions with mypyc; everything else is plain Python.

The compiled modules are the span mappers (a pure function of an assembled trace), the GenAI attribute tables,
the OTLP protobuf -> record conversion and the Prometheus score table: together about half of evald's CPU per
span (docs/benchmarks.md). Their ``.py`` sources stay the reference and are what runs when nothing is compiled.

* ``EVALD_PURE_PYTHON=1 pip install .`` skips compilation (no C compiler needed; about 1.2x the CPU per span).
* A module that fails to compile is skipped with a warning (``optional`` extensions), never a failed install.
* In an editable install the extensions sit next to their sources and shadow them: after editing a compiled
  module run ``pip install -e .`` again (the test suite refuses to run on stale extensions,
  ``evald.native.stale_modules``).

mypyc is part of mypy (``build-system.requires``); it compiles the modules as they are type-checked by
``mypy --strict`` and checks the declared types at runtime, so the annotations are part of the contract.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evald.native import COMPILED_MODULES  # noqa: E402  - the one list, also read by evald at runtime


def ext_modules() -> list[Any]:
    if os.environ.get("EVALD_PURE_PYTHON", "").strip().lower() in {"1", "true", "yes"}:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: plain Python
        print("evald: mypyc not available, installing pure Python", file=sys.stderr)
        return []
    paths = [module.replace(".", "/") + ".py" for module in COMPILED_MODULES]
    # The build environment holds only the build requirements: no pydantic (whose mypy plugin pyproject's
    # [tool.mypy] loads), no protobuf stubs. So the compile ignores that config and treats modules it cannot find
    # as untyped (dynamic); `mypy --strict` with the full config is part of the test suite.
    extensions: list[Any] = mypycify(["--config-file=", "--ignore-missing-imports", *paths], opt_level="3",
                                      debug_level="0")
    for extension in extensions:
        extension.optional = True
    return extensions


setup(ext_modules=ext_modules())
