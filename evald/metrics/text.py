"""Case values as text, for the metrics that scan or compare text (one definition for every family)."""

from __future__ import annotations

import json
from typing import Any


def as_text(value: Any) -> str:
    """A value as text: a string as is, anything else as its JSON text (non-ASCII kept), else ``str()``."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def optional_text(value: Any) -> str | None:
    """:func:`as_text` of a field that may be absent: ``None`` stays ``None``."""
    return None if value is None else as_text(value)
