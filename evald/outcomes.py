"""The outcomes of a metric that depends on something outside the process (webhooks, embedding providers, judges).

Neutral: the metrics and the judges both use it (judges raise these; the scorer catches them).

A metric raises ``MetricUnavailable`` when the service it needs gives no usable answer (unreachable, timed out,
an HTTP error, a malformed reply). The scorer turns it into an ``error`` outcome with the message as its reason:
never a score, and never "not applicable". Messages name the service (``safe_url``) and the cause, never a
credential.

A metric raises ``MetricSkipped(reason)`` when it deliberately does not run for a case although the case has what
it needs (e.g. a judge's budget is exhausted, its circuit is open, or the service must never send text): the
scorer reports the metric as skipped with that reason (counted), never as an error and never as a 0 score.
"""

from __future__ import annotations

from urllib.parse import urlsplit

_MAX_DETAIL = 200


class MetricUnavailable(RuntimeError):
    """The service a metric depends on gave no usable answer; the message says which service and why."""


class MetricSkipped(Exception):
    """The metric deliberately did not run for this case; ``reason`` is a short snake_case label."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def safe_url(url: str) -> str:
    """``scheme://host[:port]/path`` of a URL: user info, query and fragment (where secrets hide) dropped."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


def short_detail(text: object, limit: int = _MAX_DETAIL) -> str:
    """One line of at most ``limit`` characters, for an error message (e.g. the start of a response body)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
