"""``Completion``: when a released trace's last case is done, the source's deliveries it held are released.

A trace holds one ``Delivery`` per source batch that contributed to it (evald/model.py); the pipeline holds the
completion once per case queued from the trace and releases it when the case was scored and exported, so a source
(the Kafka receiver) learns a batch is done only when everything derived from it is. ``on_done`` (optional) runs
once at that moment too: the assembly window's memory limiter stops charging the trace's bytes there. No
configuration; it cannot fail (releasing more often than held is ignored).
"""

from __future__ import annotations

from collections.abc import Callable

from evald.model import Delivery

__all__ = ["Completion"]


class Completion:
    """Releases the deliveries a released (or dropped) trace held once every case derived from it is done."""

    __slots__ = ("_deliveries", "_pending", "_closed", "_on_done")

    def __init__(self, deliveries: list[Delivery], on_done: Callable[[], None] | None = None) -> None:
        self._deliveries = deliveries
        self._pending = 1
        self._closed = False
        self._on_done = on_done

    def hold(self, n: int = 1) -> None:
        self._pending += n

    def release(self) -> None:
        self._pending -= 1
        if self._pending <= 0 and not self._closed:
            self._closed = True
            for delivery in self._deliveries:
                delivery.release()
            if self._on_done is not None:
                self._on_done()
