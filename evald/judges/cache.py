"""The judge's verdict cache: identical cases are judged once.

Config (``judges.<name>.cache``): ``enabled`` (default true), ``max_entries`` (default 10000; least recently used
evicted first), ``ttl`` (default 1h; an entry is reused until then). Entries live in a ``cachetools.TTLCache``
(bounded LRU with per-entry expiry). Keys are built by ``cache_key`` from the metric kind and version, the judge
model, a hash of the prompt template (system text with the task and verdict fields, nonce excluded) and a hash of
the redacted data, so the key never holds case text and a change of metric, model, task or content misses.

Single-flight: while one call for a key is in flight, identical requests wait for it instead of sending their
own (a hit when it succeeds). Only verdicts are stored: an error or a skip is passed to the requests waiting on
that call and forgotten, so the next request tries again. If the leading request is cancelled (e.g. its metric
timed out), one of the waiters takes over and makes the call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from cachetools import TTLCache

from evald.judges.config import CacheConfig

T = TypeVar("T")


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def cache_key(metric: str, model: str, template: str, data: Sequence[tuple[str, str]]) -> str:
    """``metric`` is ``kind@version``; ``template`` the trusted prompt text (task and verdict fields);
    ``data`` the redacted (label, text) blocks."""
    return _digest([metric, model, _digest(template), _digest([list(pair) for pair in data])])


class VerdictCache(Generic[T]):
    def __init__(self, config: CacheConfig, timer: Callable[[], float] = time.monotonic) -> None:
        self._entries: TTLCache[str, T] = TTLCache(config.max_entries, config.ttl, timer=timer)
        self._in_flight: dict[str, asyncio.Future[T]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def get_or_call(self, key: str, call: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The cached value for ``key`` (hit: True), else the result of ``call()`` shared with every concurrent
        request for the same key; raises what ``call`` raised."""
        while True:
            if (found := self._entries.get(key)) is not None:
                return found, True
            pending = self._in_flight.get(key)
            if pending is None:
                return await self._lead(key, call), False
            await asyncio.wait([pending])  # raises only if *this* request is cancelled
            if not pending.cancelled():
                return pending.result(), True  # re-raises the leader's error, which is not cached
            # the leader was cancelled before it finished: loop, and one waiter leads a new call

    async def _lead(self, key: str, call: Callable[[], Awaitable[T]]) -> T:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            value = await call()
        except Exception as err:
            future.set_exception(err)
            future.exception()  # retrieved: no "exception never retrieved" warning when nobody waited
            raise
        else:
            self._entries[key] = value
            future.set_result(value)
            return value
        finally:
            del self._in_flight[key]
            if not future.done():
                future.cancel()  # the leader was cancelled: the waiters start over
