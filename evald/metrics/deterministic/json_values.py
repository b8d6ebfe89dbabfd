"""Shared JSON helpers of the deterministic metrics: read an output or expected value as a JSON value."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class NotJsonError(ValueError):
    """The value is text that does not parse as strict JSON, or cannot be represented as JSON."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in strict JSON")


#: rejects NaN and Infinity; built once (``json.loads`` with ``parse_constant`` builds a decoder per call)
STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def json_value(value: Any) -> Any:
    """The JSON form of ``value``: text is parsed as strict JSON (surrounding whitespace ignored); a structured
    value is normalised (tuples become lists, mapping keys strings). Raises ``NotJsonError`` with a short reason.
    """
    if isinstance(value, str):
        try:
            return STRICT_DECODER.decode(value.strip())
        except json.JSONDecodeError as err:
            raise NotJsonError(f"{err.msg} at line {err.lineno} column {err.colno}") from err
        except (ValueError, RecursionError) as err:
            raise NotJsonError(str(err) or type(err).__name__) from err
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as err:
        raise NotJsonError(str(err) or type(err).__name__) from err


def same_json(a: Any, b: Any) -> bool:
    """Equality of two JSON scalars or empty containers: a bool only equals a bool; ``1 == 1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return type(a) is type(b) and a == b
    return bool(a == b)


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0``, but ``True`` is not ``1``; lists and tuples compare alike."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return set(left) == set(right) and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and bool(left == right)


def type_name(value: Any) -> str:
    """A JSON type name for messages: object, array, string, number, boolean or null."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"
