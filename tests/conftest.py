"""Session-wide guard: refuse to test stale compiled modules (evald/native.py)."""

from __future__ import annotations

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
