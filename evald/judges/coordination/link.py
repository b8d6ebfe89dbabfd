"""One judge's connection to the shared Redis: every call under a deadline, health, and reconnection.

Failure semantics: a Redis call that fails or passes ``redis.timeout`` raises ``CoordinationDown`` (counted in
``evald_judge_coordination_redis_errors_total{reason}``; the caller governs that operation in process) and marks
the link down (a timeout only when the previous call timed out too: one late answer is more often an event loop
busy with CPU work than a Redis that is gone); while it is down, calls fail
fast without touching the network (the callers govern in process: their fallback), and one background task pings
Redis with exponential backoff (0.1 s doubling to ``reconnect_max_interval``). When a ping answers, the link is up
again (``on_recovery`` callbacks run first, e.g. the spend made during the outage is added to the shared windows),
so the next call uses Redis again; nothing needs a restart.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from evald.judges.coordination.config import CoordinationConfig
from evald.judges.coordination.telemetry import CoordinationTelemetry

logger = logging.getLogger(__name__)
T = TypeVar("T")
_FIRST_RETRY = 0.1
#: consecutive timeouts that mark the link down (one only sends that call to the fallback)
_TIMEOUTS_DOWN = 2


class CoordinationDown(Exception):
    """Redis could not be used for this call; ``reason`` is ``unreachable``, ``timeout`` or ``error``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


#: redis-py sends CLIENT SETINFO on every new connection unless told not to (``driver_info`` since 7.x/8.x,
#: ``lib_name``/``lib_version`` before, deprecated since)
_NO_CLIENT_NAME: dict[str, None] = (
    {"driver_info": None} if "driver_info" in inspect.signature(AbstractConnection.__init__).parameters
    else {"lib_name": None, "lib_version": None})


def make_client(config: CoordinationConfig) -> aioredis.Redis:
    """A client on a bounded, blocking pool (``redis.max_connections``; waiting for a free connection is part of
    the call's deadline), without the client-name commands redis-py sends on each new connection."""
    cfg = config.redis
    options: dict[str, Any] = {
        "socket_timeout": cfg.timeout, "socket_connect_timeout": cfg.timeout, "retry_on_timeout": False,
        "password": cfg.resolved_password(), "health_check_interval": 0,
        "max_connections": cfg.max_connections, "timeout": cfg.timeout, **_NO_CLIENT_NAME,
    }
    if cfg.tls and cfg.url.startswith("redis://"):
        options["connection_class"] = aioredis.SSLConnection
    if cfg.tls_ca_file is not None:
        options["ssl_ca_certs"] = cfg.tls_ca_file
        options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
    pool = aioredis.BlockingConnectionPool.from_url(cfg.url, **options)
    return aioredis.Redis(connection_pool=pool)


class RedisLink:
    def __init__(self, judge: str, config: CoordinationConfig, telemetry: CoordinationTelemetry,
                 client: aioredis.Redis | None = None) -> None:
        self.judge = judge
        self.config = config
        self.prefix = f"{config.redis.key_prefix}:judge:{judge}"
        self.client = client if client is not None else make_client(config)
        self._tm = telemetry
        self._timeout = config.redis.timeout
        self.up = True
        self._down_reason = "unreachable"
        self._reconnect: asyncio.Task[None] | None = None
        self.on_recovery: list[Callable[[], Awaitable[None]]] = []
        self._scripts: dict[str, AsyncScript] = {}
        self.round_trips = 0
        self._timeouts = 0  # consecutive
        self._is_up = asyncio.Event()
        self._is_up.set()
        telemetry.up.labels(judge).set(1)

    def script(self, lua: str, keys: Sequence[str], args: Sequence[str | int | float]) -> Awaitable[Any]:
        """Run a Lua script by its SHA (``EVALSHA``; loaded once, again after a Redis restart)."""
        script = self._scripts.get(lua)
        if script is None:
            script = self._scripts[lua] = self.client.register_script(lua)
        result: Awaitable[Any] = script(keys=list(keys), args=list(args))
        return result

    def key(self, *parts: object) -> str:
        return ":".join([self.prefix, *(str(p) for p in parts)])

    @property
    def down_reason(self) -> str:
        return self._down_reason

    async def run(self, operation: str, call: Callable[[], Awaitable[T]]) -> T:
        """``await call()`` under the Redis deadline; raises ``CoordinationDown`` (fast while the link is down)."""
        if not self.up:
            raise CoordinationDown(self._down_reason)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._timeout):
                result = await call()
        except (TimeoutError, RedisTimeoutError) as err:
            self._timeouts += 1
            if self._timeouts < _TIMEOUTS_DOWN:  # one late answer (e.g. an event loop busy with CPU work)
                self._tm.errors.labels(self.judge, "timeout").inc()
                raise CoordinationDown("timeout", type(err).__name__) from None
            raise self._failed("timeout", err) from None
        except (RedisConnectionError, OSError) as err:
            raise self._failed("unreachable", err) from None
        except RedisError as err:
            raise self._failed("error", err) from None
        self.round_trips += 1
        self._timeouts = 0
        self._tm.latency.labels(self.judge, operation).observe(time.perf_counter() - started)
        return result

    def _failed(self, reason: str, err: BaseException) -> CoordinationDown:
        self._tm.errors.labels(self.judge, reason).inc()
        if self.up:
            logger.warning("judge %s: Redis %s (%s): governing in process (limit / %d replicas) until it is back",
                           self.judge, reason, type(err).__name__, self.config.expected_replicas)
        self.up = False
        self._is_up.clear()
        self._down_reason = reason
        self._tm.up.labels(self.judge).set(0)
        if self._reconnect is None or self._reconnect.done():
            self._reconnect = asyncio.get_running_loop().create_task(self._reconnect_loop())
        return CoordinationDown(reason, type(err).__name__)

    async def _reconnect_loop(self) -> None:
        delay = _FIRST_RETRY
        while True:
            await asyncio.sleep(delay)
            try:
                async with asyncio.timeout(self._timeout):
                    await self.client.ping()
            except (TimeoutError, RedisError, OSError):
                delay = min(delay * 2, self.config.reconnect_max_interval)
                continue
            self.up = True
            self._is_up.set()
            self._tm.up.labels(self.judge).set(1)
            self._tm.reconnects.labels(self.judge).inc()
            logger.info("judge %s: Redis reachable again: shared governance resumed", self.judge)
            self._reconnect = None  # a failure during recovery starts a new loop
            for recover in self.on_recovery:
                try:
                    await recover()
                except CoordinationDown:
                    break  # down again: _failed started a new reconnection loop
            return

    async def wait_up(self) -> None:
        """Until the link is up (the caller bounds the wait)."""
        await self._is_up.wait()

    async def aclose(self) -> None:
        if self._reconnect is not None:
            self._reconnect.cancel()
            await asyncio.gather(self._reconnect, return_exceptions=True)
        try:
            async with asyncio.timeout(self._timeout):
                await self.client.aclose()
        except (TimeoutError, RedisError, OSError):
            pass
