"""Shared config building blocks: ``ComponentConfig``, ``Duration`` ("5s" -> 5.0), ``Endpoint`` ("host:port").

Every component's config model extends ``ComponentConfig`` (unknown keys are errors; configs are immutable).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s|m|h)?\s*$")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: Any) -> float:
    """Parse ``"250ms"``, ``"5s"``, ``"2m"``, ``"1h"`` or a number of seconds into seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like '5s', '250ms', '2m'")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION_RE.match(value)):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f"invalid duration {value!r}: use a number of seconds or a string like '5s', '250ms', '2m'")
    if seconds < 0:
        raise ValueError(f"duration {value!r} must not be negative")
    return seconds


def parse_endpoint(value: Any) -> str:
    """Validate ``host:port`` (port 0 means "any free port", used by tests)."""
    if not isinstance(value, str) or ":" not in value:
        raise ValueError(f"invalid endpoint {value!r}: expected 'host:port', e.g. '0.0.0.0:4317'")
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"invalid endpoint {value!r}: expected 'host:port' with a port from 0 to 65535")
    return value


def split_endpoint(endpoint: str) -> tuple[str, int]:
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


Duration = Annotated[float, BeforeValidator(parse_duration)]
Endpoint = Annotated[str, BeforeValidator(parse_endpoint)]


class ComponentConfig(BaseModel):
    """Base of every config model: unknown keys are errors, and a loaded config never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
