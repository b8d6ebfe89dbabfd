"""Admin HTTP server (aiohttp): ``/metrics``, ``/healthz`` and ``/readyz`` on one ``host:port``.

* ``GET /metrics``: everything on ``telemetry.registry`` (self-metrics and score series), in the Prometheus text
  format, or OpenMetrics when the ``Accept`` header asks for ``application/openmetrics-text``; gzip when the
  scraper accepts it. ``?name[]=evald_scored_cases_total&name[]=...`` renders only those series (as the
  official client's exposition handler does), which keeps a frequent probe of one counter cheap. Rendering runs
  in a worker thread so a large scrape does not stall the event loop.
* ``GET /healthz``: ``200 ok`` whenever the event loop answers (liveness).
* ``GET /readyz``: ``200`` once every component started and the service is not stopping, else ``503``; the JSON
  body lists the components that are not ready and whether the service is stopping.

The endpoint is ``exporters.prometheus.endpoint`` (or ``telemetry.endpoint``); port 0 binds a free port, read
it from ``bound_port``. ``start`` fails fast (``OSError``) when the port is taken; ``shutdown`` is idempotent
and safe without ``start``. No access log: scrapes are frequent and carry nothing worth logging.

Connection hygiene as on the OTLP/HTTP port (evald/receivers/connection_limits.py, listener ``admin``): slow
headers and idle keep-alive connections are closed, a response the client does not read is abandoned after
``write_timeout``, at most ``max_connections`` (default 64) are open (the oldest idle one makes room, else 503),
and running out of file descriptors pauses accepting with one rate-limited WARNING instead of a traceback per
``accept()``. ``limits`` (a ``ListenerLimitsConfig``) overrides the defaults.

``routes`` registers more routes on the app (the evaluation explorer, evald/explorer/server.py); ``core=False``
serves only those (the explorer's own ``explorer.endpoint``), under the listener name ``name``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client.exposition import choose_encoder

from evald.config.base import split_endpoint
from evald.receivers.connection_limits import ListenerLimitsConfig, ListenerState
from evald.receivers.listener import GuardedSite, guard_middleware
from evald.telemetry import Telemetry

logger = logging.getLogger(__name__)

#: ``max_connections: 0`` (auto) on the admin listener: probes and scrapes need few
ADMIN_MAX_CONNECTIONS = 64


class AdminHttpServer:
    def __init__(self, endpoint: str, telemetry: Telemetry, *, host_override: str | None = None,
                 limits: ListenerLimitsConfig | None = None,
                 routes: Callable[[web.Application], None] | None = None, core: bool = True,
                 name: str = "admin") -> None:
        host, port = split_endpoint(endpoint)
        self.host = host_override if host_override is not None else host
        self.port = port
        self.telemetry = telemetry
        self.bound_port: int | None = None
        self.limits = limits or ListenerLimitsConfig()
        self._runner: web.AppRunner | None = None
        self._closed = False
        self._routes = routes
        self._core = core
        self._name = name
        self._listener = ListenerState(name, self.limits, telemetry, ADMIN_MAX_CONNECTIONS)

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[guard_middleware(self._listener)])
        if self._core:
            app.router.add_get("/metrics", self._metrics)
            app.router.add_get("/healthz", self._healthz)
            app.router.add_get("/readyz", self._readyz)
        if self._routes is not None:
            self._routes(app)
        return app

    async def start(self) -> None:
        if self._runner is not None or self._closed:
            return
        runner = web.AppRunner(self._app(), access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               keepalive_timeout=self.limits.idle_timeout)
        await runner.setup()
        try:
            await GuardedSite(runner, self.host, self.port, self._listener).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        addresses = runner.addresses
        self.bound_port = int(addresses[0][1]) if addresses else self.port
        logger.info("%s http listening on %s:%s", self._name, self.host, self.bound_port,
                    extra={"component": "admin_http"})

    async def shutdown(self, timeout: float) -> None:
        if self._closed:
            return
        self._closed = True
        runner, self._runner = self._runner, None
        if runner is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await runner.cleanup()
        except TimeoutError:
            logger.warning("admin http did not stop within %.1fs", timeout, extra={"component": "admin_http"})

    async def _metrics(self, request: web.Request) -> web.Response:
        accept = ",".join(request.headers.getall("Accept", []))
        encoder, content_type = choose_encoder(accept)
        names = request.query.getall("name[]", [])
        registry = self.telemetry.registry
        body = await asyncio.to_thread(encoder, registry.restricted_registry(names) if names else registry)
        response = web.Response(body=body, headers={"Content-Type": content_type})
        response.enable_compression()
        return response

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        health = self.telemetry.health
        body = {
            "ready": health.ready,
            "started": health.started,
            "stopping": health.stopping,
            "not_ready": sorted(name for name, ok in health.components.items() if not ok),
        }
        return web.Response(
            status=200 if health.ready else 503, text=json.dumps(body), content_type="application/json"
        )
