"""``fast_init``: a cheaper ``__init__`` for the frozen, slotted dataclasses on the hot path.

A frozen dataclass's ``__init__`` stores every field with ``object.__setattr__(self, name, value)`` (a global
lookup, an attribute lookup and a generic call per field), because its own ``__setattr__`` refuses writes. For
``EvalCase`` (25 fields) that made one construction cost as much as a whole deterministic metric; evald builds
several per trace (spans, messages, cases, scores).

``fast_init`` replaces the generated ``__init__`` by one that gives the new instance, for the duration of the
call, a mutable twin class with the very same slots (``__class__`` assignment between layout-compatible classes is
plain Python), stores the fields with ordinary attribute writes, then gives it its real class back and runs
``__post_init__``. Everything else stays the dataclass's own: signature and defaults, ``default_factory``,
``init=False`` fields, equality, hashing, ``repr``, ``replace()``, pickling, and the ``FrozenInstanceError`` on
any later write. Only plain dataclasses are supported (slots, direct subclass of ``object``, no ``kw_only`` or
``InitVar``); anything else is refused at import time with ``TypeError``.

``constructor(cls)`` returns the same construction as a plain function (same signature, same instance): calling a
class goes through ``type.__call__``, which packs keyword arguments into a dict and calls ``__init__`` through a
slot wrapper; a plain function call does not, which halves the cost of building a small record (0.47 -> 0.22 µs
for a ``Message``). The hot paths (conversion, mapping, scoring) build their records with it;
``constructor(Score)`` is typed as ``Score``'s own constructor, so calls are checked like ``Score(...)``.

``replace(obj, **changes)`` is ``dataclasses.replace`` for any dataclass; for a ``fast_init`` class it copies the
fields slot to slot into a new twin instance, applies the changes, resets ``init=False`` fields as ``__init__``
does and runs ``__post_init__``: the same result without ``dataclasses.replace``'s per-call walk over
``fields()`` and its keyword-argument ``__init__`` call (an ``EvalCase`` given a golden's references: 2.7 -> 0.64 µs).
A field that is not an ``__init__`` parameter raises ``ValueError`` (``init=False``) or ``TypeError`` (unknown), as
``dataclasses.replace`` does.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

__all__ = ["constructor", "fast_init", "replace"]

_CONSTRUCTORS: dict[type, Callable[..., Any]] = {}
_REPLACERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}


def replace(obj: T, /, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)``, faster for a ``fast_init`` class (see the module docstring)."""
    replacer = _REPLACERS.get(type(obj))
    if replacer is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    return replacer(obj, changes)  # type: ignore[no-any-return]


def _replace_error(cls: type, name: str, init_names: frozenset[str]) -> Exception:
    if name in {f.name for f in dataclasses.fields(cls)} - init_names:
        return ValueError(f"field {name} is declared with init=False, it cannot be specified with replace()")
    return TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}")


def constructor(cls: Callable[P, T]) -> Callable[P, T]:
    """``cls``'s construction as a plain function (see the module docstring); ``cls`` must be ``fast_init``'s."""
    try:
        return _CONSTRUCTORS[cls]  # type: ignore[index]
    except KeyError:
        raise TypeError(f"constructor: {getattr(cls, '__name__', cls)!r} is not a fast_init class") from None


def fast_init(cls: type[T]) -> type[T]:
    """Class decorator, applied above ``@dataclass(frozen=True, slots=True)``."""
    target: Any = cls  # a dataclass, checked below
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__ or cls.__bases__ != (object,):
        raise TypeError(f"fast_init: {cls.__name__} must be a frozen, slotted dataclass deriving from object")
    fields = dataclasses.fields(target)
    original = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    if [p.name for p in original] != [f.name for f in fields if f.init] or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD for p in original):
        raise TypeError(f"fast_init: {cls.__name__} uses kw_only or InitVar fields")
    twin = type(f"_Mutable{cls.__name__}", (object,), {"__slots__": cls.__dict__["__slots__"]})
    scope: dict[str, Any] = {"_twin": twin, "_cls": cls, "_set": object.__setattr__, "_MISSING": dataclasses.MISSING,
                             "_alloc": object.__new__}
    params_src: list[str] = []
    body: list[str] = ["_set(self, '__class__', _twin)"]
    reset: list[str] = []  # what __init__ stores in its init=False fields (replace() does it too)
    for f in fields:
        name = f.name
        fallback: str | None = None  # the expression of the field's default, if it has one
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{name}"], fallback = f.default, f"_default_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{name}"], fallback = f.default_factory, f"_factory_{name}()"
        if not f.init:
            if fallback is not None:
                body.append(f"self.{name} = {fallback}")
                reset.append(f"new.{name} = {fallback}")
        elif fallback is None:
            params_src.append(name)
            body.append(f"self.{name} = {name}")
        elif f.default is not dataclasses.MISSING:
            params_src.append(f"{name}={fallback}")
            body.append(f"self.{name} = {name}")
        else:  # a factory runs per instance, only when no value is given
            params_src.append(f"{name}=_MISSING")
            body.append(f"self.{name} = {fallback} if {name} is _MISSING else {name}")
    body.append("self.__class__ = _cls")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    params = ", ".join(params_src)
    source = f"def __init__(self, {params}) -> None:\n" + "".join(f"    {line}\n" for line in body)
    # the constructor: the same body on a fresh instance of the twin (no __init__ to call: nothing else to run)
    new_body = ["self = _alloc(_twin)", *body[1:], "return self"]
    source += f"def _construct({params}):\n" + "".join(f"    {line}\n" for line in new_body)
    # replace(): the fields copied slot to slot, the changes applied, then what __init__ does after storing them
    init_names = frozenset(f.name for f in fields if f.init)
    scope["_init_names"], scope["_error"] = init_names, _replace_error
    copied = [f"new.{f.name} = old.{f.name}" for f in fields if f.init]
    replace_body = ["new = _alloc(_twin)", *copied, "for name, value in changes.items():",
                    "    if name not in _init_names:", "        raise _error(_cls, name, _init_names)",
                    "    setattr(new, name, value)", *reset, "new.__class__ = _cls",
                    *(["new.__post_init__()"] if hasattr(cls, "__post_init__") else []), "return new"]
    source += "def _replace(old, changes):\n" + "".join(f"    {line}\n" for line in replace_body)
    exec(source, scope)  # noqa: S102 - generated from the dataclass's own field names, as dataclasses does
    _REPLACERS[cls] = scope["_replace"]
    construct = scope["_construct"]
    construct.__name__ = construct.__qualname__ = f"new_{cls.__name__}"
    _CONSTRUCTORS[cls] = construct
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    target.__init__ = init
    return cls
