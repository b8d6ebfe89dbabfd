"""Shared text helpers of the similarity metrics: output/expected as text, references, word tokens."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

_WORD_RE = re.compile(r"\w+")


def as_text(value: Any) -> str:
    """A value as text: a string as is, anything else as its JSON text (non-ASCII kept), else ``str()``."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def references(expected: Any) -> list[str]:
    """The reference texts in ``expected``: a list or tuple holds several, anything else is one; ``None``: none."""
    if expected is None:
        return []
    if isinstance(expected, list | tuple):
        return [as_text(item) for item in expected if item is not None]
    return [as_text(expected)]


def normalize_whitespace(text: str) -> str:
    """Trim, and collapse every whitespace run to one space."""
    return " ".join(text.split())


def word_tokens(text: str, lowercase: bool = True) -> list[str]:
    """Word tokens (runs of Unicode letters, digits and ``_``; punctuation dropped) after NFC normalisation,
    case-folded unless ``lowercase`` is False."""
    text = unicodedata.normalize("NFC", text)
    return _WORD_RE.findall(text.casefold() if lowercase else text)
