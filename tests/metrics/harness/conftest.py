"""Every test starts and ends with empty adapter caches (tests register plugin metrics or hide the package)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evald.metrics import harness_adapter


@pytest.fixture(autouse=True)
def _fresh_adapter_caches() -> Iterator[None]:
    harness_adapter.harness_metric_class.cache_clear()
    harness_adapter._catalog.cache_clear()
    yield
    harness_adapter.harness_metric_class.cache_clear()
    harness_adapter._catalog.cache_clear()
