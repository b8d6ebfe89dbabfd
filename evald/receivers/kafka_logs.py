"""A rate limit on aiokafka's own WARNING/ERROR log lines (no config keys).

While a broker is down, aiokafka logs every failed connect, metadata refresh, fetch and heartbeat at ERROR, again
after every retry backoff: 60 to 80 lines per second with the test settings (measured by
tests/receivers/kafka/test_kafka_broker_restart.py), hundreds of thousands in an hour-long outage.
:func:`quiet_aiokafka_logs` (idempotent; called by ``security_options``, through which every aiokafka client of
evald is built: the kafka receiver, its dead-letter producer, the ingest producer) puts a filter on every aiokafka
logger that lets one WARNING-or-worse line per (logger, message template) through per 20 s, as evald's own
``RateLimitedLog`` does, and adds to the next line that passes how many similar ones were suppressed. INFO lines
(group joins, assignments) are untouched. Failure semantics: none; the filter only drops repeated log lines, the
outage itself stays visible in the first line of each kind and in the self-metrics (failed commits, lag).
"""

from __future__ import annotations

import logging
import time

__all__ = ["quiet_aiokafka_logs"]

INTERVAL = 20.0  # seconds between two lines of the same kind
_MAX_KEYS = 1000  # bounded memory: the table is cleared beyond it


class _RateLimit(logging.Filter):
    def __init__(self, interval: float) -> None:
        super().__init__("aiokafka")
        self._interval = interval
        self._last: dict[tuple[str, str], float] = {}
        self._suppressed: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        if len(self._last) >= _MAX_KEYS:
            self._last.clear()
            self._suppressed.clear()
        self._last[key] = now
        if suppressed := self._suppressed.pop(key, 0):
            record.msg = f"{record.msg} ({suppressed} similar messages suppressed in {self._interval:g}s)"
        return True


_FILTER = _RateLimit(INTERVAL)


def quiet_aiokafka_logs() -> None:
    """Attach the rate limit to every aiokafka logger that exists now (a logger's filter applies to its own lines
    only, not to its children's, hence one per module logger); idempotent."""
    for name, found in list(logging.Logger.manager.loggerDict.items()):
        if (name == "aiokafka" or name.startswith("aiokafka.")) and isinstance(found, logging.Logger) \
                and _FILTER not in found.filters:
            found.addFilter(_FILTER)
