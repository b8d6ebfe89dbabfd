"""The explorer: its store, the feed from the pipeline, and its routes (docs/explorer.md).

Routes (on the admin port, or on ``explorer.endpoint`` when set)::

    GET /debug/evaluations                     list page (filters as query parameters: evald/explorer/views.py)
    GET /debug/evaluations/case/{id}           case page
    GET /debug/evaluations/api/evaluations     the list as JSON: {items, matched, stats}
    GET /debug/evaluations/api/evaluations/{id} one record as JSON (content redacted unless show_content)
    GET /debug/evaluations/api/stats           what the store holds and what it evicted, by ring and bound

Fed by ``ExplorerExporter`` (an Exporter the service adds to the pipeline's, receiving every ScoredCase) and by
``observe`` (a ``MapperRouter.observe`` callback: not-evaluable traces with their reasons). Config keys: see
evald/explorer/config.py.

Failure semantics: with ``auth`` (or the OTLP receivers' auth) a request without an accepted token gets 401
(counted as ``evald_receiver_unauthenticated_requests_total{receiver="explorer"}``); a bad filter is a 400 naming
the parameter; an unknown or evicted id is a 404. The feed never raises into the pipeline: a record that cannot
be kept is logged (rate-limited) and skipped. A separate ``endpoint`` that cannot bind fails ``start``
(``OSError``), as the admin port does.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from aiohttp import web

from evald.explorer.config import ExplorerConfig
from evald.explorer.pages import case_page, error_page, list_page
from evald.explorer.store import EvaluationStore
from evald.explorer.views import API, BASE, Filters, Redaction, record, select, summary, trace_url
from evald.interfaces import MappingResult
from evald.judges.redaction import Redactor
from evald.model import AssembledTrace, ScoredCase
from evald.receivers.auth import Authenticator, ReceiverAuthConfig
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Explorer:
    def __init__(self, config: ExplorerConfig, telemetry: Telemetry, auth: ReceiverAuthConfig | None = None) -> None:
        self.config = config
        self.store = EvaluationStore(config.max_items, int(config.max_mib * 1024 * 1024), config.failing_share,
                                     config.max_rate)
        self.redaction = Redaction(None if config.show_content else Redactor(config.redaction))
        auth = config.auth or auth
        self.auth = Authenticator(auth, telemetry, receiver="explorer", transport="http") if auth else None
        self.exporter = ExplorerExporter(self)
        self.server: Any = None
        if config.endpoint is not None:
            from evald.exporters.admin_http import AdminHttpServer

            self.server = AdminHttpServer(config.endpoint, telemetry, routes=self.register, core=False,
                                          name="explorer")
        self._warnings = RateLimitedLog(logger)

    # feed -------------------------------------------------------------------------------------------------------
    def add(self, batch: Sequence[ScoredCase]) -> None:
        now = time.time()  # one clock read per batch
        for scored in batch:
            try:
                self.store.add_scored(scored, now)
            except Exception as err:  # never cost the pipeline a batch
                self._warnings.log(logging.WARNING, "add", "explorer: a record was not kept: %s", type(err).__name__)

    def observe(self, trace: AssembledTrace, result: MappingResult) -> None:
        if not result.not_evaluable:
            return
        service = next((str(s.resource["service.name"]) for s in trace.spans if "service.name" in s.resource), None)
        for item in result.not_evaluable:
            self.store.add_not_evaluable(trace.trace_id, item, service)

    # routes -----------------------------------------------------------------------------------------------------
    def register(self, app: web.Application) -> None:
        for path, handler in ((BASE, self._list_page), (f"{BASE}/", self._list_page),
                              (f"{BASE}/case/{{id}}", self._case_page), (f"{API}/evaluations", self._list_api),
                              (f"{API}/evaluations/{{id}}", self._case_api), (f"{API}/stats", self._stats_api)):
            app.router.add_get(path, self._guarded(handler, html=not path.startswith(API)))

    def _guarded(self, handler: Handler, *, html: bool) -> Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            if self.auth is not None:
                api_key = request.headers.get(self.auth.api_key_header) if self.auth.api_key_header else None
                reason = self.auth.check(request.headers.get("Authorization"), api_key)
                if reason is not None:
                    message = self.auth.refuse(reason, request.remote)
                    return _error(401, message, html, {"WWW-Authenticate": 'Bearer realm="evald"'})
            try:
                return await handler(request)
            except ValueError as err:
                return _error(400, str(err), html)

        return guarded

    async def _list_page(self, request: web.Request) -> web.StreamResponse:
        filters = Filters.parse(request.query)
        entries = list(self.store.entries())
        shown, matched = select(entries, filters)
        links = {e.id: trace_url(self.config.trace_url_template, e) for e in shown}
        return _html(list_page(entries, shown, matched, filters, self.store.stats(), links))

    async def _case_page(self, request: web.Request) -> web.StreamResponse:
        entry = self.store.get(_id(request))
        if entry is None:
            return _error(404, "no such evaluation (evicted, or never kept)", True)
        return _html(case_page(record(entry, self.config.trace_url_template, self.redaction)))

    async def _list_api(self, request: web.Request) -> web.StreamResponse:
        filters = Filters.parse(request.query)
        shown, matched = select(self.store.entries(), filters)
        items = [summary(e, self.config.trace_url_template) for e in shown]
        return _json({"items": items, "matched": matched, "stats": self.store.stats()})

    async def _case_api(self, request: web.Request) -> web.StreamResponse:
        entry = self.store.get(_id(request))
        if entry is None:
            return _error(404, "no such evaluation (evicted, or never kept)", False)
        return _json(record(entry, self.config.trace_url_template, self.redaction))

    async def _stats_api(self, request: web.Request) -> web.StreamResponse:
        return _json(self.store.stats())


class ExplorerExporter:
    """Receives every ScoredCase the pipeline exports; starts and stops the explorer's own listener, if any."""

    #: export() only records in the store and never waits: the pipeline calls it without a deadline
    in_memory: ClassVar[bool] = True

    def __init__(self, explorer: Explorer) -> None:
        self.id = "explorer"
        self._explorer = explorer

    async def start(self) -> None:
        if self._explorer.server is not None:
            await self._explorer.server.start()

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        self._explorer.add(batch)

    async def shutdown(self, timeout: float) -> None:
        if self._explorer.server is not None:
            await self._explorer.server.shutdown(timeout)


def _id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isdigit():
        raise ValueError("an evaluation id is a number")
    return int(raw)


def _html(text: str, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                                 "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
                                 **(headers or {})})


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=json.dumps(body, ensure_ascii=False, default=str), status=status,
                        content_type="application/json", headers={"Cache-Control": "no-store", **(headers or {})})


def _error(status: int, message: str, html: bool, headers: dict[str, str] | None = None) -> web.Response:
    if html:
        return _html(error_page(status, message), status, headers)
    return _json({"error": message}, status, headers)
