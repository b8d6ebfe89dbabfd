"""Option types shared by the metrics' ``Options`` models (the regex types live in ``evald/config/patterns.py``)."""

from __future__ import annotations

from evald.config.patterns import Pattern, Regex

__all__ = ["Pattern", "Regex"]
