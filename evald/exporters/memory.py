"""In-memory exporter: keeps every ScoredCase it receives (used by ``evald replay`` and by tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from evald.model import ScoredCase


class InMemoryExporter:
    def __init__(self, component_id: str = "memory") -> None:
        self.id = component_id
        self.cases: list[ScoredCase] = []
        self._changed = asyncio.Event()

    async def start(self) -> None:
        return None

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        self.cases.extend(batch)
        self._changed.set()

    async def wait_for(self, count: int, timeout: float) -> bool:
        """Wait until at least ``count`` cases arrived (tests)."""
        async with asyncio.timeout(timeout):
            while len(self.cases) < count:
                self._changed.clear()
                await self._changed.wait()
        return True

    async def shutdown(self, timeout: float) -> None:
        return None
