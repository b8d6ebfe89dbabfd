"""Turn pydantic validation errors into ``(yaml_path, message)`` problems, as ``ConfigError`` reports them.

An unknown key gets "did you mean" with the nearest keys allowed at its place (suggest.py): the place is found by
walking the model's field types along the error's location (models, ``list``/``dict`` items, unions, ``X | None``).
``without_duplicates`` keeps one problem per path for the paths whose value could not be built at all (a missing
``${env:VAR}``): the value left in its place is empty, and what its validator says about that is noise.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from evald.config.suggest import did_you_mean

UNKNOWN_KEY = "unknown key (not allowed here)"
_SEQUENCES = (list, tuple, set, frozenset, Sequence)
_MAPPINGS = (dict, Mapping)


def pydantic_problems(err: ValidationError, prefix: str, model: type[BaseModel] | None = None) -> list[tuple[str, str]]:
    """One ``(path, message)`` per error; ``model`` (what was validated) lets unknown keys get a suggestion."""
    out = []
    for item in err.errors():
        path = prefix
        for part in item["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            elif part not in ("function-after", "function-before"):
                path = f"{path}.{part}" if path else str(part)
        msg = item["msg"]
        if item["type"] == "extra_forbidden":
            msg = UNKNOWN_KEY
            key = item["loc"][-1] if item["loc"] else None
            allowed = allowed_keys(model, tuple(item["loc"][:-1])) if model is not None else None
            if isinstance(key, str) and allowed:
                msg += did_you_mean(key, allowed)
        out.append((path, msg))
    return out


def allowed_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str] | None:
    """The keys the model accepts at ``loc`` (a pydantic error location), or None when it cannot tell."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return None
    found = [m for m in _members(current) if _is_model(m)]
    if len(found) != 1:
        return None
    model_found = found[0]
    by_name = bool(model_found.model_config.get("populate_by_name") or model_found.model_config.get("validate_by_name"))
    keys = {field.alias or name for name, field in model_found.model_fields.items()}
    return sorted(keys | set(model_found.model_fields) if by_name else keys)


def without_duplicates(problems: Iterable[tuple[str, str]], unbuilt: set[str]) -> list[tuple[str, str]]:
    """``problems`` with, for each path in ``unbuilt``, only the first problem at that path (the one saying why)."""
    seen: set[str] = set()
    out = []
    for path, message in problems:
        if path in unbuilt:
            if path in seen:
                continue
            seen.add(path)
        out.append((path, message))
    return out


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _members(tp: Any) -> list[Any]:
    """``tp`` without ``Annotated`` and split into its union members (``None`` left out)."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _members(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [m for arg in get_args(tp) for m in _members(arg)]
    return [] if tp is type(None) else [tp]


def _step(tp: Any, part: int | str) -> Any:
    """The type found one location part below ``tp``, or None."""
    members = _members(tp)
    for member in members:  # pydantic names the union member it tried: step onto it
        if isinstance(part, str) and getattr(member, "__name__", None) == part and len(members) > 1:
            return member
    for member in members:
        origin, args = get_origin(member), get_args(member)
        if _is_model(member) and isinstance(part, str):
            for name, field in member.model_fields.items():
                if part in (name, field.alias):
                    return field.annotation
        elif origin in _SEQUENCES and isinstance(part, int) and args:
            return args[0]
        elif origin in _MAPPINGS and isinstance(part, str) and len(args) == 2:
            return args[1]
    return None
