"""Shared pieces of the metrics that leave the process (webhooks, embedding providers, judges).

A metric raises ``MetricUnavailable`` when the service it needs gives no usable answer (unreachable, timed out,
an HTTP error, a malformed reply). The scorer turns it into an ``error`` outcome with the message as its reason:
never a score, and never "not applicable". Messages name the service (``safe_url``) and the cause, never a
credential.
"""

from __future__ import annotations

from urllib.parse import urlsplit

_MAX_DETAIL = 200


class MetricUnavailable(RuntimeError):
    """The service a metric depends on gave no usable answer; the message says which service and why."""


def safe_url(url: str) -> str:
    """``scheme://host[:port]/path`` of a URL: user info, query and fragment (where secrets hide) dropped."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


def short_detail(text: object, limit: int = _MAX_DETAIL) -> str:
    """One line of at most ``limit`` characters, for an error message (e.g. the start of a response body)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
