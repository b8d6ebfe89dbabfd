"""Builds the component graph from a resolved config and runs its lifecycle.

Start order (exporters first, receivers last, as in the Collector): exporters -> admin HTTP (health, /metrics)
-> workers -> assembly window -> (the OTLP receivers' write-ahead logs opened and an earlier process's rows replayed
into the window, evald/receivers/wal.py) -> receivers. Stop order is the reverse, within ``pipeline.shutdown_timeout``
(``T``): receivers stop accepting (at most 2 s); the window releases what it holds to the pipeline and the
pipeline drains until ``T`` minus a reserve (``T/5`` within [1 s, 2 s], at most ``T/2``); what is left then is
dropped and counted by reason (evald/pipeline/engine.py); exporters flush and close in the reserve, which also
covers the totals, the listener and most of the interpreter's exit. The totals (every case
mapped = scored + sampled out + without metric + dropped by reason, and what the window and the exporters dropped)
are logged in one line (INFO, WARNING when anything was dropped or is unaccounted for) while ``/metrics`` still
answers with the same final counters (after a WARNING for 0.25 s more, so that a scrape can see them; part of the
margin below when the deadline has passed); the admin listener closes last (at most 0.5 s). The process exits within
``T`` plus about a second (cancelled workers' grace, metric clients closing, the listener, interpreter exit;
docs/architecture.md). SIGTERM and SIGINT trigger a graceful stop; a second signal forces the exit.
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
from evald.judges.tracing import install_tracing, shutdown_tracing
from evald.mapping.router import MapperRouter, default_mappers
from evald.native import COMPILED_MODULES, compiled
from evald.pipeline.accounting import shutdown_totals
from evald.pipeline.bindings import build_bindings, wants_llm_call_cases
from evald.pipeline.conversations import ConversationTracker
from evald.pipeline.engine import EvaluationPipeline
from evald.pipeline.goldens import ReferenceResolver
from evald.pipeline.sampling import Sampler
from evald.receivers.wal import ReceiverWal
from evald.receivers.wal_replay import replay_wal
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
        split_judged: bool = True,
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
        self.explorer: Any = None
        if with_admin and root.explorer.enabled:  # /debug/evaluations (evald/explorer/), fed as an exporter
            from evald.explorer.config import receiver_auth
            from evald.explorer.server import Explorer

            self.explorer = Explorer(root.explorer, self.telemetry, receiver_auth(config.receivers))
            self.exporters.append(self.explorer.exporter)
        self.admin: Any = None
        if with_admin:
            from evald.exporters.admin_http import AdminHttpServer

            on_admin = self.explorer is not None and root.explorer.endpoint is None
            self.admin = AdminHttpServer(self._admin_endpoint(), self.telemetry, limits=root.telemetry.listener,
                                         routes=self.explorer.register if on_admin else None)
        bindings = build_bindings(config.metrics)
        bind_metric_info(self.exporters, metric_infos(bindings))  # metric versions and pass/fail-only metrics
        # llm_call cases only when a metric scores them (scope llm_call or all); replay observes what it maps
        self.router = MapperRouter(default_mappers(llm_call_cases=wants_llm_call_cases(bindings)))
        if self.explorer is not None:
            self.router.observe(self.explorer.observe)
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
            split_judged=split_judged,
        )
        self.window = TraceWindow(root.assembly, self.telemetry)
        install_judges(root.judges, self.telemetry.registry)  # what judged metrics call, each through one limiter
        install_tracing(root.telemetry.traces)  # judge calls as spans (telemetry.traces; off by default)
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
        for wal in self._wals():  # an OTLP receiver's write-ahead log: an earlier process's requests first
            await wal.open()
            await replay_wal(wal, self.window, lambda: self._stop.is_set())
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
        """Graceful stop within ``pipeline.shutdown_timeout`` (see the module docstring); idempotent."""
        if self._stopped:
            return
        self._stopped = True
        started = time.monotonic()
        deadline = started + self.config.root.pipeline.shutdown_timeout
        self.telemetry.health.stopping = True

        def remaining() -> float:
            return max(0.0, deadline - time.monotonic())

        for receiver in self.receivers:
            await _safely(receiver.shutdown(min(2.0, max(0.1, remaining()))), f"receiver {receiver.id}")
        await self._drain(remaining)
        totals = self._totals()
        if totals is not None:
            level, line = totals
            logger.log(level, "evald stopped after %.2fs: %s", time.monotonic() - started, line)
            if level > logging.INFO and self.admin is not None:  # something was dropped: let a scrape see it
                await asyncio.sleep(_FINAL_SCRAPE)
        if self.admin is not None:  # closed last: until here a scrape sees the final counters
            await _safely(self.admin.shutdown(0.5), "admin http")
        if totals is None:
            logger.info("evald stopped")

    def _totals(self) -> tuple[int, str] | None:
        pipeline = getattr(self, "pipeline", None)  # the ingest role has no pipeline
        if pipeline is None:
            return None
        totals = shutdown_totals(self.telemetry, pipeline.no_metric)
        return (logging.WARNING if totals.alarming else logging.INFO), totals.line()

    async def _drain(self, remaining: Callable[[], float]) -> None:
        """After the receivers stopped: evaluate and export what was accepted within ``remaining()`` seconds, the
        reserve kept for the exporters to flush and close and for the process to exit (see the module docstring)."""
        budget = remaining()
        reserve = min(_RESERVE_MAX, max(_RESERVE_MIN, budget * _RESERVE_SHARE), budget / 2)

        def draining() -> float:
            return max(0.0, remaining() - reserve)

        wals = self._wals()  # rows stop being deleted before anything is dropped: the next start replays them
        freeze = _freeze_before(wals, draining())  # the drain's deadline drops what is left
        await _safely(self.window.shutdown(self.pipeline.on_trace, draining()), "assembly window")
        await _safely(self.pipeline.shutdown(draining()), "pipeline")
        freeze.cancel()
        await _safely(asyncio.wait_for(close_judges(), timeout=min(2.0, max(0.1, remaining()))), "judges")
        await _safely(asyncio.to_thread(shutdown_tracing, min(1.0, max(0.1, remaining()))), "judge traces")
        for wal in wals:  # an exporter's flush drops at once what it cannot send in time
            wal.freeze()
        budget = max(0.1, remaining())  # exporters flush concurrently, so one slow exporter cannot starve the others
        await asyncio.gather(*(_safely(asyncio.wait_for(e.shutdown(budget), budget + 0.5), f"exporter {e.id}")
                               for e in self.exporters))
        for wal in wals:
            await _safely(wal.close(), f"receiver WAL {wal.receiver_id}")

    def _wals(self) -> list[ReceiverWal]:
        """The receivers' write-ahead logs (receivers.otlp.wal), each once (both transports share one)."""
        return list({id(w): w for r in self.receivers if (w := getattr(r, "wal", None)) is not None}.values())


#: Part of ``pipeline.shutdown_timeout`` kept for the exporters to flush and close and for the process to exit.
_RESERVE_MIN, _RESERVE_MAX, _RESERVE_SHARE = 1.0, 2.0, 0.2
#: A receiver's write-ahead log stops deleting rows this long before the drain's deadline (evald/receivers/wal.py).
_WAL_FREEZE = 0.05
#: When the shutdown dropped anything, /metrics keeps answering with the final counters this long after the totals
#: are logged.
_FINAL_SCRAPE = 0.25


def _freeze_before(wals: list[ReceiverWal], seconds: float) -> asyncio.TimerHandle:
    """Freeze the logs ``_WAL_FREEZE`` before a deadline at which what is left is dropped (and counted)."""
    def freeze() -> None:
        for wal in wals:
            wal.freeze()

    return asyncio.get_running_loop().call_later(max(0.0, seconds - _WAL_FREEZE), freeze)


async def _safely(awaitable: Any, what: str) -> None:
    try:
        await awaitable
    except Exception:
        logger.exception("error while stopping %s", what)
