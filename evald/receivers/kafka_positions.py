"""The Kafka receiver's rebalance listener, and committed offsets past a partition's end treated as out of range.

A broker that comes back with an empty log (in-memory storage, a re-created topic) restarts the partition's
offsets at 0, while the group may still hold (or evald may just have committed, on revocation) offsets of the old
log. A broker answers a fetch beyond the log end with ``OFFSET_OUT_OF_RANGE`` and the consumer falls back to its
reset policy; a broker that answers with an empty batch instead (the tansu broker does) would make the consumer
silently skip every new record below the stale offset. On every assignment the Kafka receiver therefore compares
each partition's committed offset with its end offset, and when the committed offset is beyond the end it applies
``initial_offset`` (``earliest``: the beginning, ``latest``: the end) before anything is fetched, by committing
that offset for the group (the consumer positions itself at the committed offset after the rebalance callback) and
seeking to it.

Failure semantics: the check is bounded by ``timeout`` seconds (the receiver passes 10 s or its session timeout if
longer: a broker that just restarted can take seconds to answer); a broker that does not answer leaves the
positions as the consumer chose them (logged, rate-limited). Returns the partitions it rewound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from typing import Any

from evald.telemetry import RateLimitedLog

logger = logging.getLogger(__name__)
_errors = RateLimitedLog(logger)


async def rewind_beyond_end(consumer: Any, assigned: Collection[Any], initial_offset: str, timeout: float,
                            component_id: str) -> list[Any]:
    partitions = list(assigned)
    rewound: list[Any] = []
    if not partitions:
        return rewound
    earliest = initial_offset == "earliest"
    try:
        async with asyncio.timeout(timeout):
            ends = await consumer.end_offsets(partitions)
            for tp in partitions:
                committed = await consumer.committed(tp)
                end = ends.get(tp)
                if committed is None or end is None or committed <= end:
                    continue
                target = (await consumer.beginning_offsets([tp])).get(tp, 0) if earliest else end
                # committed, not only sought: the consumer reads the group's committed offset after this callback
                await consumer.commit({tp: target})
                consumer.seek(tp, target)
                rewound.append(tp)
                logger.warning("%s: committed offset %d of %s-%d is beyond the log end %d (the broker lost its "
                               "log?): reading from the %s", component_id, committed, tp.topic, tp.partition, end,
                               "beginning" if earliest else "end",
                               extra={"component": component_id})
    except Exception as err:  # noqa: BLE001 - a broker that cannot answer now must not break the rebalance
        _errors.log(logging.WARNING, f"{component_id}:rewind", "%s: could not compare committed and end offsets "
                    "after a rebalance: %s", component_id, str(err) or type(err).__name__)
    return rewound


class RebalanceListener:
    """aiokafka's ``ConsumerRebalanceListener`` for a ``KafkaReceiver`` (registered as a virtual subclass)."""

    def __init__(self, receiver: Any) -> None:
        self._receiver = receiver

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await self._receiver.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        await self._receiver.on_assigned(assigned)
