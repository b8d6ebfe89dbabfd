"""Consumer lag of the ``kafka`` receiver: ``evald_kafka_consumer_lag{receiver,topic,partition}``.

No config keys of its own: it is refreshed every ``commit_interval`` of the receiver (at most 5 s apart).

Definition (the Collector's and Burrow's convention): lag = the partition's **high watermark** (the offset the next
produced record will get) minus the group's **last committed offset** (the next record the group would re-read after
a crash), never negative. Since evald commits only records whose evaluations are all exported, the lag counts
records not yet fully evaluated, including those in the assembly window and queue. Before this replica's first commit
of a partition in an assignment, the committed offset is the offset it started reading from (the group's committed
offset, or the ``initial_offset`` reset position when the group has none).

The high watermark comes from the consumer's latest fetch response for the partition (no extra request). When no
fetch response is known yet, or while the partitions are paused by backpressure (paused partitions are not
fetched, so that value would be stale exactly when lag grows), it is asked for with a ListOffsets(latest) request
(``end_offsets``) under a deadline; if that fails the last known value is used, and a partition with none is left
out of this refresh.

A partition's series is removed as soon as it is revoked (another replica reports it) and on shutdown. Also kept
here: ``evald_kafka_assigned_partitions{receiver}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from prometheus_client import Gauge

from evald.telemetry import RateLimitedLog

__all__ = ["ConsumerLag"]

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)
MAX_REFRESH = 5.0


class _Offsets(Protocol):
    committed: int | None

    @property
    def first(self) -> int | None: ...


class ConsumerLag:
    """Keeps the lag gauge of one receiver's assigned partitions up to date (see the module docstring)."""

    def __init__(self, receiver: str, lag: Gauge, assigned: Gauge, interval: float, timeout: float = 5.0) -> None:
        self._id = receiver
        self._lag = lag
        self._assigned = assigned
        self._interval = min(interval, MAX_REFRESH)
        self._timeout = timeout
        self._labels: set[tuple[str, str]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self, consumer: Any, partitions: Callable[[], Mapping[Any, _Offsets]],
              paused: Callable[[], bool]) -> None:
        async def loop() -> None:
            while True:
                await asyncio.sleep(self._interval)
                try:
                    await self.refresh(consumer, partitions, paused())
                except Exception as err:  # e.g. a partition revoked mid-refresh: the next refresh is clean
                    _errors.log(logging.WARNING, f"{self._id}:lag:{type(err).__name__}",
                                "%s: consumer lag refresh failed: %r", self._id, err)

        self._task = asyncio.create_task(loop(), name=f"{self._id}:lag")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        self._assigned.labels(self._id).set(0)
        self._remove(set(self._labels))

    def assigned(self, count: int, revoked: Iterable[Any] = ()) -> None:
        """The assignment changed: ``count`` partitions are owned, ``revoked`` ones are not (their series go)."""
        self._assigned.labels(self._id).set(count)
        self._remove({(tp.topic, str(tp.partition)) for tp in revoked})

    async def refresh(self, consumer: Any, partitions: Callable[[], Mapping[Any, _Offsets]], paused: bool) -> None:
        """Set the gauge for every assigned partition; drop the series of partitions no longer assigned."""
        watermarks: dict[Any, int] = {}
        ask = []
        for tp in partitions():
            known = consumer.highwater(tp)
            if known is None or paused:
                ask.append(tp)
            else:
                watermarks[tp] = known
        if ask:
            try:
                watermarks.update(await asyncio.wait_for(consumer.end_offsets(ask), self._timeout))
            except Exception as err:  # broker slow or gone: the last known high watermark is used
                _errors.log(logging.WARNING, f"{self._id}:lag:{type(err).__name__}",
                            "%s: reading high watermarks failed: %r", self._id, err)
                for tp in ask:
                    if (known := consumer.highwater(tp)) is not None:
                        watermarks[tp] = known
        bases: dict[Any, int | None] = {}
        for tp, offsets in list(partitions().items()):
            bases[tp] = offsets.committed if offsets.committed is not None else offsets.first
            if bases[tp] is None:
                with contextlib.suppress(Exception):
                    bases[tp] = await asyncio.wait_for(consumer.position(tp), self._timeout)
        live = partitions()  # re-read: a rebalance may have happened during the awaits above
        seen: set[tuple[str, str]] = set()
        for tp, base in bases.items():
            if tp in live and base is not None and (high := watermarks.get(tp)) is not None:
                label = (tp.topic, str(tp.partition))
                self._lag.labels(self._id, *label).set(max(0, high - base))
                seen.add(label)
        self._remove(self._labels - {(tp.topic, str(tp.partition)) for tp in live})
        self._labels |= seen

    def _remove(self, labels: set[tuple[str, str]]) -> None:
        for topic, partition in labels & self._labels:
            with contextlib.suppress(KeyError):
                self._lag.remove(self._id, topic, partition)
        self._labels -= labels
