"""Connection hygiene for evald's aiohttp listeners (OTLP/HTTP and the admin server): timeouts, a cap, eviction.

Config keys (flat in ``receivers.otlp.http``; the admin listener uses the same model with its own defaults), named
after the Collector's ``confighttp`` server settings (Go ``http.Server``) where one exists:

* ``read_header_timeout`` (10s): a new connection must complete its request line and headers within this; so must
  each later request from its first byte. Otherwise the connection is closed (slowloris headers).
* ``read_timeout`` (30s): a request's body must arrive within this once its headers are read; a slower body is
  answered 408 and the connection closed (enforced by the handler that reads the body: otlp_http.py).
* ``write_timeout`` (30s): a response the client does not read (the socket's send buffer stays full) for this long
  closes the connection.
* ``idle_timeout`` (60s): a keep-alive connection with no request for this long is closed (also aiohttp's
  ``keepalive_timeout``).
* ``max_connections`` (0 = auto): open connections on this listener. Auto is a share of the process's open-file
  limit (``RLIMIT_NOFILE``, soft), so a flood of connections cannot use every descriptor: OTLP/HTTP half of
  (limit - 256), clamped to 16..8192 (384 at a limit of 1024); the admin listener 64.

At the cap, a new connection takes the place of the oldest connection that is not in a request (idle keep-alive,
or still sending its headers), which is closed (``evicted``), as nginx reuses idle keep-alive connections; when
every connection is in a request, the new one gets ``503`` with ``Connection: close`` (refused ``max_connections``).
When ``accept()`` fails for lack of descriptors (EMFILE/ENFILE) or kernel memory, the listener closes up to 16 of
the process's oldest idle connections (of any guarded listener) to free descriptors, stops accepting for 50 ms
(doubling to 1 s while nothing could be freed), counts it and logs one WARNING per listener at most every 30 s.
asyncio's own accept loop would log a traceback for every failed ``accept()`` (thousands of lines a second;
listener.py explains why).

Self-metrics (``listener`` is ``otlp/http`` style receiver ids or ``admin``): ``evald_listener_connections``
(gauge, open now), ``evald_listener_connections_accepted_total``, ``evald_listener_connections_closed_total{reason}``
(``header_timeout``, ``idle_timeout``, ``write_timeout``, ``evicted``) and
``evald_listener_connections_refused_total{reason}`` (``max_connections``, ``fd_exhausted`` per failed accept,
``accept_error``). Never raises into the event loop: a callback error closes only its connection.

``raise_open_file_limit()`` (called once by ``evald run`` before anything listens) raises the soft ``RLIMIT_NOFILE``
to the hard limit, as the Go runtime does for every Go program (the Collector included), so the auto caps above are
computed from the larger limit; it logs both values and keeps the soft limit if the kernel refuses.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.telemetry import Telemetry, shared_instruments

logger = logging.getLogger(__name__)

#: descriptors left for everything but the listeners (files, Kafka, judges, gRPC, logs) in the auto cap
FD_RESERVE = 256
State = Literal["new", "idle", "header", "active"]


class ListenerLimitsConfig(ComponentConfig):
    """Connection limits of one aiohttp listener (module docstring)."""

    read_header_timeout: Duration = Field(
        10.0, gt=0, description="Request line and headers must arrive within this (else the connection is closed).")
    read_timeout: Duration = Field(
        30.0, gt=0, description="A request body must arrive within this after its headers (else 408 and close).")
    write_timeout: Duration = Field(
        30.0, gt=0, description="A response the client does not read for this long closes the connection.")
    idle_timeout: Duration = Field(60.0, gt=0, description="A keep-alive connection idle this long is closed.")
    max_connections: int = Field(
        0, ge=0, description="Open connections on this listener; beyond it the oldest idle one is closed, else 503. "
        "0 = auto: half of (RLIMIT_NOFILE - 256), 16..8192.")


def raise_open_file_limit() -> int:
    """Soft ``RLIMIT_NOFILE`` raised to the hard limit (module docstring); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == soft:
        logger.info("open-file limit (RLIMIT_NOFILE): %s (already the hard limit)", _limit(soft))
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as err:
        logger.warning("open-file limit (RLIMIT_NOFILE): %s; cannot raise it to the hard limit %s: %s", _limit(soft),
                       _limit(hard), err)
        return soft
    logger.info("open-file limit (RLIMIT_NOFILE): raised from %s to the hard limit %s", _limit(soft), _limit(hard))
    return hard


def _limit(value: int) -> str:
    return "unlimited" if value == resource.RLIM_INFINITY else str(value)


def auto_max_connections(share: float = 0.5, low: int = 16, high: int = 8192) -> int:
    """``share`` of the open-file limit left after ``FD_RESERVE``, clamped to ``low..high``."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return high
    return max(low, min(high, int((soft - FD_RESERVE) * share)))


@dataclass(frozen=True, slots=True)
class ListenerMetrics:
    open: Gauge
    accepted: Counter
    closed: Counter
    refused: Counter


def listener_metrics(telemetry: Telemetry) -> ListenerMetrics:
    return shared_instruments(telemetry.registry, _build)


def _build(r: CollectorRegistry) -> ListenerMetrics:
    return ListenerMetrics(
        Gauge("evald_listener_connections", "Open connections per HTTP listener.", ["listener"], registry=r),
        Counter("evald_listener_connections_accepted", "Connections accepted per HTTP listener.", ["listener"],
                registry=r),
        Counter("evald_listener_connections_closed", "Connections closed by evald, by reason (header_timeout, "
                "idle_timeout, write_timeout, evicted).", ["listener", "reason"], registry=r),
        Counter("evald_listener_connections_refused", "Connections refused, by reason (max_connections, "
                "fd_exhausted: a failed accept(), accept_error).", ["listener", "reason"], registry=r),
    )


class ConnectionTable:
    """Every guarded connection of the process that is not in a request, oldest first per listener (one table for
    all listeners, because file descriptors are a process-wide resource). Each operation is O(1) per connection."""

    def __init__(self) -> None:
        self._evictable: dict[str, OrderedDict[ConnectionGuard, float]] = {}

    def evictable(self, guard: ConnectionGuard, yes: bool) -> None:
        entries = self._evictable.setdefault(guard.listener.name, OrderedDict())
        entries.pop(guard, None)
        if yes:
            entries[guard] = time.monotonic()  # appended: the newest

    def evict(self, count: int, listener: str | None = None) -> int:
        """Close up to ``count`` of the oldest connections not in a request (of ``listener`` only, if given)."""
        closed = 0
        while closed < count:
            oldest: tuple[float, ConnectionGuard] | None = None
            for name, entries in self._evictable.items():
                if entries and (listener is None or name == listener):
                    guard, since = next(iter(entries.items()))
                    if oldest is None or since < oldest[0]:
                        oldest = (since, guard)
            if oldest is None:
                break
            oldest[1].close("evicted")  # leaves the table
            closed += 1
        return closed


TABLE = ConnectionTable()


class ListenerState:
    """One listener's limits, open connections and counters; ``guard(inner)`` wraps a new connection's protocol."""

    def __init__(self, name: str, limits: ListenerLimitsConfig, telemetry: Telemetry, auto_cap: int) -> None:
        self.name = name
        self.limits = limits
        self.max_connections = limits.max_connections or auto_cap
        self.connections = 0
        self.by_transport: dict[asyncio.BaseTransport, ConnectionGuard] = {}
        metrics = listener_metrics(telemetry)
        self._open = metrics.open.labels(name)
        self._open.set(0)
        self.accepted = metrics.accepted.labels(name)
        self._closed = metrics.closed
        self._refused = metrics.refused

    def count_closed(self, reason: str) -> None:
        self._closed.labels(self.name, reason).inc()

    def count_refused(self, reason: str) -> None:
        self._refused.labels(self.name, reason).inc()

    def opened(self) -> None:
        self.connections += 1
        self._open.inc()
        self.accepted.inc()

    def gone(self) -> None:
        self.connections -= 1
        self._open.dec()

    def make_room(self) -> bool:
        """At the cap: evict this listener's oldest idle connection; False if every connection is in a request."""
        return self.connections < self.max_connections or TABLE.evict(1, self.name) == 1

    def guard(self, inner: asyncio.Protocol) -> ConnectionGuard:
        return ConnectionGuard(inner, self)


class ConnectionGuard(asyncio.Protocol):
    """Wraps one connection's protocol: one timer per state (``new``/``header``: read_header_timeout, ``idle``:
    idle_timeout, ``active``: none: the handler bounds its own reads), the write timeout while writing is paused, and
    the connection's place in the eviction order. The listener counted the connection when it was accepted;
    ``release`` uncounts it exactly once (closed by evald, lost, or never made)."""

    def __init__(self, inner: asyncio.Protocol, listener: ListenerState) -> None:
        self._inner = inner
        self.listener = listener
        self.transport: asyncio.BaseTransport | None = None
        self.state: State = "new"
        self._timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._released = False

    # -- state -------------------------------------------------------------------------------------------------

    def _enter(self, state: State) -> None:
        if self._released:  # closed already: no timer, no place in the table
            return
        self.state = state
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        limits = self.listener.limits
        TABLE.evictable(self, state != "active")
        if state == "active":
            return
        if state == "idle":
            delay, reason = limits.idle_timeout, "idle_timeout"
        else:
            delay, reason = limits.read_header_timeout, "header_timeout"
        self._timer = asyncio.get_running_loop().call_later(delay, self.close, reason)

    def request_started(self) -> None:
        self._enter("active")

    def request_finished(self) -> None:
        self._enter("idle")

    def close(self, reason: str) -> None:
        """Close the connection for ``reason`` (counted once)."""
        if self._released:
            return
        self.listener.count_closed(reason)
        transport = self.transport
        self.release()
        if transport is not None:
            if reason == "write_timeout" and isinstance(transport, asyncio.WriteTransport):
                transport.abort()  # the buffered response will never be read
            else:
                transport.close()

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        for timer in (self._timer, self._write_timer):
            if timer is not None:
                timer.cancel()
        TABLE.evictable(self, False)
        if self.transport is not None:
            self.listener.by_transport.pop(self.transport, None)
        self.listener.gone()

    # -- asyncio.Protocol, forwarded -----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.listener.by_transport[transport] = self
        self._enter("new")
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.state == "idle":
            self._enter("header")
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.release()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._write_timer is None and not self._released:
            delay = self.listener.limits.write_timeout
            self._write_timer = asyncio.get_running_loop().call_later(delay, self.close, "write_timeout")
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        self._inner.resume_writing()


def guard_of(listener: ListenerState, transport: asyncio.BaseTransport | None) -> ConnectionGuard | None:
    return listener.by_transport.get(transport) if transport is not None else None

