"""Content-capture diagnosis: per service and instrumentation, whether message content reaches evald, and the switch.

Every case the mappers produce carries ``metadata.content_capture`` (``full`` / ``partial`` / ``masked`` / ``none``)
and ``metadata.instrumentation`` (evald/mapping/content_capture.py). This component counts them in
``evald_content_capture_cases_total{service_name, instrumentation, content}`` and, for cases whose content was not
recorded (``none``) or hidden (``masked``), logs one WARN per service and instrumentation per ``interval`` that names
the library and the exact switch that turns content on (evald/mapping/instrumentations.py), so a user whose content
metrics only ever skip learns why and what to change. docs/capturing-content.md has the same table.

Bounds: at most ``max_series`` (service, instrumentation) pairs get their own labels; later pairs are counted under
``service_name="other"`` (the instrumentation and status stay exact). Never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final

from evald.case import EvalCase
from evald.mapping.content_capture import CONTENT_CAPTURE, INSTRUMENTATION, MASK_MARKER
from evald.mapping.instrumentations import OTHER, by_id
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)

_WARNED: Final = frozenset({"none", "masked"})
_OVERFLOW: Final = "other"


class ContentDiagnosis:
    """Counts cases by content-capture status and warns, rate-limited, where content does not arrive."""

    def __init__(self, telemetry: Telemetry, *, max_series: int = 200, interval: float = 3600.0) -> None:
        self._counter = telemetry.content_capture
        self._max_series = max_series
        self._pairs: set[tuple[str, str]] = set()
        self._children: dict[tuple[str, str, str], Any] = {}
        self._log = RateLimitedLog(logger, interval)

    def observe_all(self, cases: Iterable[EvalCase]) -> None:
        """Count ``cases`` (one trace's, usually of one service and status): consecutive cases of one label set are
        counted with one increment."""
        pending: Any = None
        run = 0
        for case in cases:
            try:
                child = self._classify(case)
            except Exception:  # diagnosis must never cost a case
                logger.debug("content diagnosis failed", exc_info=True)
                continue
            if child is pending:
                run += 1
                continue
            if pending is not None:
                pending.inc(run)
            pending, run = child, 1
        if pending is not None:
            pending.inc(run)

    def observe(self, case: EvalCase) -> None:
        child = self._classify(case)
        if child is not None:
            child.inc()

    def _classify(self, case: EvalCase) -> Any:
        """The counter child of ``case``'s label set (None: no status to count); warns for it (rate-limited)."""
        meta = case.metadata
        status = meta.get(CONTENT_CAPTURE)
        if not isinstance(status, str):
            return None
        instrumentation = meta.get(INSTRUMENTATION)
        instrumentation = instrumentation if isinstance(instrumentation, str) else OTHER.id
        service = case.service_name or "unknown"
        key = (service, instrumentation, status)
        child = self._children.get(key)
        if child is None:
            child = self._child(service, instrumentation, status)
        if status in _WARNED:
            self._warn(service, instrumentation, status, meta.get(MASK_MARKER))
        return child

    def _child(self, service: str, instrumentation: str, status: str) -> Any:
        pair = (service, instrumentation)
        if pair not in self._pairs:
            if len(self._pairs) >= self._max_series:
                return self._counter.labels(_OVERFLOW, instrumentation, status)  # not cached: stays bounded
            self._pairs.add(pair)
        child = self._children[(service, instrumentation, status)] = self._counter.labels(service, instrumentation,
                                                                                          status)
        return child

    def _warn(self, service: str, instrumentation: str, status: str, marker: object) -> None:
        library = by_id(instrumentation)
        how = (f"masks it (marker {marker!r})" if status == "masked" and isinstance(marker, str)
               else "masks it" if status == "masked" else "records no message content")
        self._log.log(
            logging.WARNING, f"content:{service}:{instrumentation}",
            "service %r: %s %s, so metrics that need the input or output skip (missing_input / missing_output) "
            "and only model, tokens, latency and errors are scored. To score content, set %s "
            "(see docs/capturing-content.md; evald redacts secrets and PII before any judge)",
            service, library.library, how, library.switch,
        )
