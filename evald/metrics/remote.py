"""Shared pieces of the metrics that leave the process (webhooks, embedding providers, judges): the outcome
exceptions and URL/detail helpers, defined in ``evald/outcomes.py`` (neutral, so judges raise them without
importing the metrics). See that module for the semantics of ``MetricUnavailable`` and ``MetricSkipped``.
"""

from __future__ import annotations

from evald.outcomes import MetricSkipped, MetricUnavailable, safe_url, short_detail

__all__ = ["MetricSkipped", "MetricUnavailable", "safe_url", "short_detail"]
