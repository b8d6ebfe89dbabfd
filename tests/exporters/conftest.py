"""Fixtures shared by the otlp exporter tests: a recording OTLP sink and a rotel collector in front of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.exporters.otlp_sink import OTLPSink, Rotel


@pytest.fixture
async def sink() -> AsyncIterator[OTLPSink]:
    s = await OTLPSink().start()
    yield s
    await s.stop()


@pytest.fixture
def collector(tmp_path: Path, sink: OTLPSink) -> Iterator[Rotel]:
    rotel = Rotel(tmp_path, sink.port).start()
    yield rotel
    rotel.stop()
