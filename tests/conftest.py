"""Session-wide guard: refuse to test stale compiled modules (evald/native.py); and every test leaves the root
logger as it found it (the in-process CLI binds a handler to the sys.stderr of the moment, which pytest closes
after the test: a later log call would print a "Logging error" traceback)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from evald.native import stale_modules


def pytest_sessionstart(session: pytest.Session) -> None:
    stale = stale_modules()
    if stale:
        pytest.exit(
            "compiled extensions are older than their sources (" + ", ".join(stale) + "): the tests would run the "
            "old code. Rebuild them with `python3 -m pip install -e .` (or delete the evald/**/*.so files to test "
            "the pure-Python modules).",
            returncode=2,
        )


@pytest.fixture(autouse=True)
def _root_logger_restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level
