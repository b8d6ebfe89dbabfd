"""Normalise span attribute values that arrive in many shapes.

A structured GenAI attribute may be an OTLP ``kvlist``/``array`` (already ``dict``/``list`` here), a JSON string,
or a Python-repr string (``"[{'role': 'user', ...}]"`` in the ``gen_ai.prompt`` examples). Numbers may arrive
as strings. Every helper is total: garbage in gives ``None`` (or the unchanged string), never an exception.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

import orjson

from evald.case import Document, new_document
from evald.mapping.masking import is_masked

# literal_eval on attacker-controlled text: bounded size; deep nesting raises RecursionError, which is caught
_MAX_LITERAL_EVAL_CHARS: Final = 200_000
#: bound once: compiled, ``orjson.loads`` was a module attribute lookup per parse
_ORJSON_LOADS: Final = orjson.loads
_ORJSON_ERROR: Final = orjson.JSONDecodeError
#: the first characters (after whitespace) of the text ``parse_structured`` parses; any other text it returns as is
STRUCTURED_INITIALS: Final = "[{(\""


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, Mapping)``, without the ABC check (a Python-level call) for dicts, lists, strings and
    numbers, the values JSON and OTLP conversion produce."""
    if isinstance(value, dict):
        return True
    # the tuple written out: compiled, each type is one C check (a module-level tuple was boxed on every call)
    if value is None or isinstance(value, (list, str, int, float, tuple, bytes)):
        return False
    return isinstance(value, Mapping)


def plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` itself when it is a dict (what OTLP conversion and JSON produce), else a dict of its items.

    Compiled, reads of a dict-typed value (``get``, ``in``, ``items()``) are direct C calls; on a value typed
    ``Mapping`` each ``get`` is a method lookup and a generic call. Hot readers take their input through this."""
    return mapping if isinstance(mapping, dict) else dict(mapping)


#: a Python object's repr (``StopEvent(result=...)``, ``AgentOutput()``): a framework's internal value, not prose
_OBJECT_REPR: Final = re.compile(r"[A-Z][A-Za-z0-9_]*\((?:[a-z_][A-Za-z0-9_]*=|\))|<[\w.]+ object at 0x[0-9a-fA-F]+>$")
_ESCAPED_CODE_UNIT: Final = re.compile(r"\\u([0-9a-fA-F]{4})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?")


def parse_structured(value: Any) -> Any:
    """Turn a JSON / Python-repr string into Python objects; other values (and unparsable text) pass through.

    Only text that looks like a container (``[``, ``{`` or ``(``) or a JSON string literal is parsed, so plain
    text such as ``"42"`` or ``"true"`` stays text.
    """
    cls = type(value)
    if cls is list or cls is dict or value is None:  # already structured (OTLP kvlist/array) or absent: hot path
        return value
    # ``source`` typed str: compiled, strip, indexing and ``in`` below are direct C calls (on Any, generic ones)
    if cls is str or isinstance(value, str):
        source: str = value
    elif isinstance(value, (bytes, bytearray)):
        try:
            source = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return value
    elif isinstance(value, tuple):
        return list(value)
    else:
        return value
    text = source.strip()
    if not text or text[0] not in STRUCTURED_INITIALS:
        return source
    try:
        return _ORJSON_LOADS(text)
    except _ORJSON_ERROR:
        pass  # also big integers, NaN, lone surrogates: the stdlib parser below accepts those
    if _starts_with_a_name(text):
        return source
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > _MAX_LITERAL_EVAL_CHARS:
        return source
    try:
        with warnings.catch_warnings():  # e.g. "invalid escape sequence" in span text: not evald's problem to report
            warnings.simplefilter("ignore")
            parsed = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return source
    return _from_literal(parsed)


#: the names a JSON or Python literal may start an element with (``set()``; a string prefix is followed by a quote)
_LITERAL_NAMES: Final = frozenset({"True", "False", "None", "set", "true", "false", "null", "NaN", "Infinity"})


def _starts_with_a_name(text: str) -> bool:
    """Whether neither ``json.loads`` nor ``ast.literal_eval`` can accept ``text`` because its first element (after
    the opening brackets and comments) is a name no literal has, as in ``[kb-001] Refund ...``, ``{key}: {value}``
    or DSPy's ``[[ ## question ## ]]\nWhat ...`` (templates and prose that start with a bracket: the failed Python
    parse is the costly part). Only ASCII names count; anything else (a line continuation, a string prefix) is left
    to the parsers. JSON has no names there and no comments."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "[{( \t\n\r\f":
            i += 1
        elif c == "#" and i > 0:  # a comment inside the opening bracket (text[0]) runs to the end of its line
            while i < n and text[i] != "\n" and text[i] != "\r":
                i += 1
        else:
            break
    if i == n or not (text[i].isascii() and (text[i].isalpha() or text[i] == "_")):
        return False
    j = i
    while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
        j += 1
    if j < n and (text[j] in "'\"" or not text[j].isascii()):  # a string prefix (r'', b"") or a longer name
        return False
    return text[i:j] not in _LITERAL_NAMES


def _from_literal(value: Any, depth: int = 0) -> Any:
    """Make a ``literal_eval`` result JSON-like: tuples/sets become lists, keys become strings."""
    if depth > 64:
        return None
    if isinstance(value, dict):
        return {str(k): _from_literal(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_from_literal(v, depth + 1) for v in value]
    if isinstance(value, (complex, bytes)):
        return str(value)
    return value


def parse_json_container(value: Any) -> Any:
    """Like :func:`parse_structured` but keep the original unless the result is a ``dict`` or ``list``.

    Used for tool arguments and results: ``'{"city": "Paris"}'`` becomes a dict, ``"18"`` stays ``"18"``; a
    masking marker (``[REDACTED]``...) is ``None``: the value was not recorded.
    """
    if isinstance(value, str) and is_masked(value):
        return None
    parsed = parse_structured(value)
    return parsed if isinstance(parsed, (dict, list)) else value


def decode_escapes(text: str) -> str:
    """Decode literal ``\\uXXXX`` escapes of non-ASCII characters left in text by double-encoding emitters.

    ASCII escapes (``\\u0041``) are left alone so that text which really contains a backslash sequence is
    only touched where an emitter escaped a non-ASCII character. Surrogate pairs are joined.
    """
    if "\\u" not in text:
        return text

    def _sub(match: re.Match[str]) -> str:
        high = int(match.group(1), 16)
        if match.group(2) and 0xD800 <= high <= 0xDBFF:
            low = int(match.group(2), 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        if high < 0x80 or 0xD800 <= high <= 0xDFFF:
            return match.group(0)
        return chr(high) + (f"\\u{match.group(2)}" if match.group(2) else "")

    return _ESCAPED_CODE_UNIT.sub(_sub, text)


def as_text(value: Any) -> str | None:
    """A non-empty string with escapes decoded, or ``None`` (also for a masking marker, evald.mapping.masking).
    Numbers are not text here."""
    if type(value) is not str:
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", errors="replace")
        if not isinstance(value, str):
            return None
    if not value or value.isspace():  # ``not value.strip()`` without building a stripped copy
        return None
    if is_masked(value):  # a privacy mode's marker (__REDACTED__, [Scrubbed due to ...]) is no text
        return None
    return decode_escapes(value)


def as_str(value: Any) -> str | None:
    """An identifier-like string: strings as-is (``None`` when blank), ints and floats formatted, else ``None``."""
    if type(value) is str:
        return value if value and not value.isspace() else None
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value and not value.isspace() else None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace") or None
    return None


def as_int(value: Any) -> int | None:
    """An integer from an int, an integral float or a numeric string (``"12"``); ``True`` is not an int."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            number = as_float(text)
            return int(number) if number is not None and number.is_integer() else None
    return None


def as_count(value: Any) -> int | None:
    """A non-negative integer (token counts and the like); negative or garbage values give ``None``."""
    number = as_int(value)
    return number if number is not None and number >= 0 else None


def first_count(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    """The first of ``keys`` whose value is a count (``as_count``), else ``None``; read as a dict (``plain``)."""
    data = plain(attrs)
    for key in keys:
        if (count := as_count(data.get(key))) is not None:
            return count
    return None


def as_float(value: Any) -> float | None:
    """A finite float from a number or a numeric string; ``True``, NaN and infinities give ``None``."""
    if isinstance(value, bool):
        return None
    if not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def as_list(value: Any) -> list[Any] | None:
    """A list from a list/tuple or a string holding one; anything else gives ``None``."""
    parsed = parse_structured(value)
    return parsed if isinstance(parsed, list) else None


def as_dict(value: Any) -> dict[str, Any] | None:
    """A dict (string keys) from a mapping or a string holding one; anything else gives ``None``."""
    parsed = parse_structured(value)
    if is_mapping(parsed):
        return {str(k): v for k, v in parsed.items()}
    return None


def str_list(value: Any) -> list[str]:
    """Strings of a string array (or one string); non-string items are dropped."""
    if isinstance(value, str):
        parsed = parse_structured(value)
        return [value] if not isinstance(parsed, list) else [v for v in parsed if isinstance(v, str)]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def documents(value: Any) -> list[Document] | None:
    """Retrieved documents from a ``gen_ai.retrieval.documents``-like list (``None`` when not a list).

    ``id`` and ``score`` are the convention; ``content``/``text``/``page_content`` and ``metadata`` are read when
    an emitter adds them. A bare string item is a document's content.
    """
    items = as_list(value)
    if items is None:
        return None
    docs: list[Document] = []
    for item in items:
        data = as_dict(item)
        if data is None:
            if text := as_text(item):
                docs.append(new_document(content=text))
            continue
        content = next((t for k in ("content", "text", "page_content") if (t := as_text(data.get(k)))), None)
        docs.append(new_document(id=as_str(data.get("id")), content=content, score=as_float(data.get("score")),
                             metadata=as_dict(data.get("metadata"))))
    return docs


def is_object_repr(text: str) -> bool:
    """Whether ``text`` starts like a Python object's repr with keyword fields (``StopEvent(result=...``) or is a
    default one (``<groq.Stream object at 0x7f3f...>``, what OpenInference Groq records for a stream)."""
    return _OBJECT_REPR.match(text) is not None
