"""Builds the component graph from a resolved config and runs its lifecycle.

Start order (exporters first, receivers last, as in the Collector): exporters -> admin HTTP (health, /metrics)
-> workers -> assembly window -> receivers. Stop order is the reverse, within ``pipeline.shutdown_timeout``:
receivers stop accepting, the window releases what it holds to the pipeline, the queue drains, exporters flush
and close. SIGTERM and SIGINT trigger a graceful stop; a second signal forces the exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from evald import __version__
from evald.assembly.window import TraceWindow
from evald.components import EXPORTER_FACTORIES, RECEIVER_FACTORIES, component_type
from evald.config.loader import ResolvedConfig
from evald.exporters.routing import bind_metric_info, metric_infos, route_exporters
from evald.interfaces import Exporter, Source
from evald.judges.registry import close_judges, install_judges
from evald.mapping.router import MapperRouter, default_mappers
from evald.native import COMPILED_MODULES, compiled
from evald.pipeline.bindings import build_bindings
from evald.pipeline.conversations import ConversationTracker
from evald.pipeline.engine import EvaluationPipeline
from evald.pipeline.goldens import ReferenceResolver
from evald.pipeline.sampling import Sampler
from evald.telemetry import Telemetry

logger = logging.getLogger(__name__)


class EvaldService:
    def __init__(
        self,
        config: ResolvedConfig,
        telemetry: Telemetry | None = None,
        *,
        with_receivers: bool = True,
        with_admin: bool = True,
        configured_exporters: bool = True,
        extra_exporters: Sequence[Exporter] = (),
        role: str = "all",
    ) -> None:
        self.config = config
        self.telemetry = telemetry or Telemetry()
        self.telemetry.build_info.labels(__version__).set(1)
        root = config.root
        self.exporters: list[Exporter] = list(extra_exporters)
        if configured_exporters:
            configured: list[Exporter] = []
            for component_id, cfg in config.exporters.items():
                factory = EXPORTER_FACTORIES[component_type(component_id)]
                configured.append(factory.create(cfg, self.telemetry, component_id))
            self.exporters += route_exporters(configured, root.pipelines)  # `pipelines:` filters per exporter
        self.receivers: list[Source] = []
        if with_receivers:
            for component_id, cfg in config.receivers.items():
                if role == "score" and component_type(component_id) == "otlp":
                    continue  # the score role reads Kafka only (evald/ingest/roles.py)
                factory = RECEIVER_FACTORIES[component_type(component_id)]
                self.receivers.extend(factory.create(cfg, self.telemetry, component_id))
        self.admin: Any = None
        if with_admin:
            from evald.exporters.admin_http import AdminHttpServer

            self.admin = AdminHttpServer(self._admin_endpoint(), self.telemetry)
        bindings = build_bindings(config.metrics)
        bind_metric_info(self.exporters, metric_infos(bindings))  # metric versions and pass/fail-only metrics
        self.router = MapperRouter(default_mappers())  # replay observes what it maps (not-evaluable rows)
        self.pipeline = EvaluationPipeline(
            root.pipeline,
            self.router,
            Sampler(root.sampling.ratio),
            bindings,
            self.exporters,
            self.telemetry,
            ReferenceResolver.from_config(root.goldens),
            ConversationTracker(root.conversations, self.telemetry)
            if any(m.scope == "conversation" for m in config.metrics) else None,
        )
        self.window = TraceWindow(root.assembly, self.telemetry)
        install_judges(root.judges, self.telemetry.registry)  # what judged metrics call, each through one limiter
        self._stop = asyncio.Event()
        self._started = False
        self._stopped = False

    def _admin_endpoint(self) -> str:
        if self.config.root.telemetry.endpoint:
            return self.config.root.telemetry.endpoint
        for component_id, cfg in self.config.exporters.items():
            if component_type(component_id) == "prometheus":
                return str(getattr(cfg, "endpoint"))  # noqa: B009 - typed lazily via the factory
        return "0.0.0.0:9464"

    async def start(self) -> None:
        health = self.telemetry.health
        for exporter in self.exporters:
            await exporter.start()
            health.components[f"exporter:{exporter.id}"] = True
        if self.admin is not None:
            await self.admin.start()
        await self.pipeline.start()
        await self.window.start(self.pipeline.on_trace)
        for receiver in self.receivers:
            await receiver.start(self.window)
            health.components[f"receiver:{receiver.id}"] = True
        health.started = True
        self._started = True
        logger.info("evald %s started (%d/%d hot modules compiled): %s", __version__, len(compiled()),
                    len(COMPILED_MODULES), ", ".join(self.describe_endpoints()) or "no listeners")

    def describe_endpoints(self) -> list[str]:
        out = []
        for receiver in self.receivers:
            port = getattr(receiver, "bound_port", None)
            out.append(f"{receiver.id} on port {port}")
        if self.admin is not None:
            out.append(f"/metrics /healthz /readyz on port {getattr(self.admin, 'bound_port', None)}")
        return out

    def request_stop(self) -> None:
        self._stop.set()

    async def run_until_stopped(self) -> None:
        loop = asyncio.get_running_loop()
        signals = 0

        def on_signal() -> None:
            nonlocal signals
            signals += 1
            if signals > 1:
                logger.warning("second signal: exiting without waiting")
                raise SystemExit(1)
            logger.info("signal received: shutting down (send again to force)")
            self._stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, on_signal)
        await self._stop.wait()
        await self.shutdown()

    async def shutdown(self) -> None:
        """Graceful stop within ``pipeline.shutdown_timeout``; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        deadline = time.monotonic() + self.config.root.pipeline.shutdown_timeout
        self.telemetry.health.stopping = True

        def remaining() -> float:
            return max(0.1, deadline - time.monotonic())

        for receiver in self.receivers:
            await _safely(receiver.shutdown(min(2.0, remaining())), f"receiver {receiver.id}")
        await self._drain(remaining)
        if self.admin is not None:
            await _safely(self.admin.shutdown(1.0), "admin http")
        logger.info("evald stopped")

    async def _drain(self, remaining: Callable[[], float]) -> None:
        """After the receivers stopped: evaluate and export what was accepted, within ``remaining()`` seconds."""
        await _safely(self.window.shutdown(self.pipeline.on_trace, remaining()), "assembly window")
        await _safely(self.pipeline.shutdown(remaining()), "pipeline")
        await _safely(asyncio.wait_for(close_judges(), timeout=min(2.0, remaining())), "judges")
        budget = remaining()  # exporters flush concurrently, so one slow exporter cannot starve the others
        await asyncio.gather(*(_safely(e.shutdown(budget), f"exporter {e.id}") for e in self.exporters))


async def _safely(awaitable: Any, what: str) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("error while stopping %s", what)
