"""Logging setup for the daemon: text or JSON lines on stderr (``telemetry.logs``).

JSON lines carry ``time``, ``level``, ``logger``, ``message`` (and ``exception``/``stack`` when present), plus every
field a call attached with ``extra={...}`` (``component``, ``trace_id``, ``metric``, ...) as a top-level key. An
extra value JSON cannot encode is written as its ``str()``; an extra named like one of the four base keys is
written with an ``extra_`` prefix instead of replacing it. Formatting never raises for an unusual extra.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

#: Attributes every ``LogRecord`` has (plus those the standard formatter adds); anything else came from ``extra``.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
_BASE_KEYS = ("time", "level", "logger", "message")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key in _RECORD_ATTRIBUTES or key.startswith("_"):
                continue
            payload[f"extra_{key}" if key in _BASE_KEYS or key in ("exception", "stack") else key] = value
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            payload["stack"] = self.formatStack(record.stack_info)
        return json.dumps(payload, ensure_ascii=False, default=str)


def configure_logging(level: str = "info", fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request is noise for a daemon
