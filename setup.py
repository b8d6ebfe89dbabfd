"""Build hook: compile evald's hot, pure modules to C extensions with mypyc; everything else is plain Python.

The compiled modules are the span mappers (a pure function of an assembled trace), the GenAI attribute tables,
the OTLP protobuf -> record conversion and the Prometheus score table: together about half of evald's CPU per
span (docs/benchmarks.md). Their ``.py`` sources stay the reference and are what runs when nothing is compiled.

* ``EVALD_PURE_PYTHON=1 pip install .`` skips compilation (no C compiler needed; about 1.2x the CPU per span).
* A module that fails to compile is skipped with a warning (``optional`` extensions), never a failed install.
* ``pip install`` hides a build's output unless ``-v``: the progress lines (what is compiled, how long it took) go
  to the terminal (``/dev/tty``) when there is one, else to stderr.
* In an editable install the extensions sit next to their sources and shadow them: after editing a compiled
  module run ``pip install -e .`` again (the test suite refuses to run on stale extensions,
  ``evald.native.stale_modules``).

mypyc is part of mypy (``build-system.requires``); it compiles the modules as they are type-checked by
``mypy --strict`` and checks the declared types at runtime, so the annotations are part of the contract.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evald.native import COMPILED_MODULES  # noqa: E402  - the one list, also read by evald at runtime


def say(message: str) -> None:
    """A progress line the user sees: pip captures a build's stdout/stderr (shown with -v), not the terminal."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(f"evald: {message}\n")
    except OSError:  # no terminal (CI, docker build): stderr, shown by `pip install -v` and in build logs
        print(f"evald: {message}", file=sys.stderr, flush=True)


class BuildExtWithProgress(build_ext):
    """build_ext that says which extension it compiles (one line each, with its time) and sums up at the end."""

    def run(self) -> None:
        self._index, self._built, started = 0, 0, time.monotonic()
        say(f"compiling {len(self.extensions)} C extensions (EVALD_PURE_PYTHON=1 skips this)")
        super().run()
        say(f"compiled {self._built}/{len(self.extensions)} extensions in {time.monotonic() - started:.0f} s")

    def build_extension(self, ext: Any) -> None:
        self._index += 1
        started = time.monotonic()
        if ext.name.endswith("__mypyc"):  # the library holding every module's code: most of the compile time
            say(f"[{self._index}/{len(self.extensions)}] {ext.name} (the shared library, about a minute) ...")
        super().build_extension(ext)  # an optional extension that fails raises here and is skipped with a warning
        self._built += 1
        say(f"[{self._index}/{len(self.extensions)}] {ext.name} done in {time.monotonic() - started:.1f} s")


def ext_modules() -> list[Any]:
    if os.environ.get("EVALD_PURE_PYTHON", "").strip().lower() in {"1", "true", "yes"}:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: plain Python
        print("evald: mypyc not available, installing pure Python", file=sys.stderr)
        return []
    paths = [module.replace(".", "/") + ".py" for module in COMPILED_MODULES]
    if {"bdist_wheel", "editable_wheel", "build_ext", "build", "develop", "install"} & set(sys.argv[1:]):
        # said once per install: setuptools also runs this file for metadata and the sdist (egg_info, sdist, ...)
        say(f"translating {len(paths)} modules to C with mypyc, then compiling them: " + ", ".join(COMPILED_MODULES))
    # The build environment holds only the build requirements: no pydantic (whose mypy plugin pyproject's
    # [tool.mypy] loads), no protobuf stubs. So the compile ignores that config and treats modules it cannot find
    # as untyped (dynamic); `mypy --strict` with the full config is part of the test suite.
    extensions: list[Any] = mypycify(["--config-file=", "--ignore-missing-imports", *paths], opt_level="3",
                                      debug_level="0")
    for extension in extensions:
        extension.optional = True
    return extensions


setup(ext_modules=ext_modules(), cmdclass={"build_ext": BuildExtWithProgress})
