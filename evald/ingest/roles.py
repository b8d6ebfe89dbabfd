"""``evald run --role ingest|score|all`` (or ``role:`` in the config; the command line wins).

* ``all`` (default): today's service, every configured receiver feeds this replica's pipeline; ``ingest:`` is
  not used.
* ``ingest``: the OTLP receivers and the admin server (/healthz, /readyz, /metrics) only; what they accept is
  produced to Kafka per trace by ``KafkaForwarder`` (evald/ingest/forwarder.py, config ``ingest:``). No assembly
  window, pipeline, metrics, judges or exporters; the other receivers (``kafka``) are not started.
* ``score``: everything but the OTLP receivers: the ``kafka`` receiver(s) feed the pipeline.

``role_problems(config, role)`` lists what makes a role impossible (``(yaml_path, message)`` pairs, as
``ConfigError`` reports them): ``ingest`` without an ``ingest:`` block or without an ``otlp`` receiver, ``score``
without a ``kafka`` receiver.

``IngestService`` is the ingest role's service: start order admin -> forwarder -> receivers; stop order
receivers (in-flight requests finish, they wait for the broker's acknowledgement) -> forwarder (flush, within
``pipeline.shutdown_timeout``) -> admin.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from evald import __version__
from evald.components import RECEIVER_FACTORIES, component_type
from evald.config.loader import ResolvedConfig
from evald.ingest.forwarder import KafkaForwarder
from evald.interfaces import Source
from evald.service import EvaldService, _safely
from evald.telemetry import Telemetry

logger = logging.getLogger(__name__)

def role_problems(config: ResolvedConfig, role: str) -> list[tuple[str, str]]:
    """Why ``config`` cannot run as ``role`` (empty when it can)."""
    types = {component_type(component_id) for component_id in config.receivers}
    problems: list[tuple[str, str]] = []
    if role == "ingest":
        if config.root.ingest is None:
            problems.append(("ingest", "role `ingest` needs an `ingest:` block (brokers, topics) to produce to"))
        if "otlp" not in types:
            problems.append(("receivers", "role `ingest` needs an `otlp` receiver to accept requests"))
    elif role == "score" and "kafka" not in types:
        problems.append(("receivers", "role `score` needs a `kafka` receiver to consume what the ingest role wrote"))
    return problems


class IngestService(EvaldService):
    """The ingest role: OTLP receivers -> ``KafkaForwarder``; admin HTTP for health and self-metrics.

    Reuses ``EvaldService``'s signal handling (``run_until_stopped``/``request_stop``) and admin endpoint choice;
    none of its pipeline parts are built.
    """

    def __init__(self, config: ResolvedConfig, telemetry: Telemetry | None = None, *,
                 with_admin: bool = True) -> None:  # deliberately does not call EvaldService.__init__
        ingest = config.root.ingest
        if ingest is None:
            raise ValueError("role ingest needs an `ingest:` block")
        self.config = config
        self.telemetry = telemetry or Telemetry()
        self.telemetry.build_info.labels(__version__).set(1)
        self.forwarder = KafkaForwarder(ingest, self.telemetry)
        self.receivers: list[Source] = []
        for component_id, cfg in config.receivers.items():
            if component_type(component_id) == "otlp":
                self.receivers.extend(RECEIVER_FACTORIES["otlp"].create(cfg, self.telemetry, component_id))
        for receiver in self.receivers:  # answered once Kafka acknowledged: a receiver WAL would add nothing
            if getattr(receiver, "wal", None) is not None:
                logger.warning("role ingest: %s: `wal` is not used (a request is answered once the broker has it)",
                               receiver.id)
                setattr(receiver, "wal", None)  # noqa: B010 - the OTLP receivers' attribute (Source has none)
        self.admin = None
        if with_admin:
            from evald.exporters.admin_http import AdminHttpServer

            self.admin = AdminHttpServer(self._admin_endpoint(), self.telemetry,
                                         limits=config.root.telemetry.listener)
        self._stop = asyncio.Event()
        self._started = False
        self._stopped = False

    async def start(self) -> None:
        health = self.telemetry.health
        if self.admin is not None:
            await self.admin.start()
        await self.forwarder.start()
        for receiver in self.receivers:
            await receiver.start(self.forwarder)
            health.components[f"receiver:{receiver.id}"] = True
        health.started = True
        self._started = True
        logger.info("evald %s started (role ingest): %s", __version__, ", ".join(self.describe_endpoints()))

    async def _drain(self, remaining: Callable[[], float]) -> None:
        """After the receivers stopped: wait for the broker to acknowledge what was produced."""
        await _safely(self.forwarder.shutdown(remaining()), "ingest forwarder")
