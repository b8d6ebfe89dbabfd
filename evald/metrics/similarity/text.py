"""Shared text helpers of the similarity metrics: output/expected as text, references, word tokens."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from evald.metrics.text import as_text

_WORD_RE = re.compile(r"\w+")


def references(expected: Any) -> list[str]:
    """The reference texts in ``expected``: a list or tuple holds several, anything else is one; ``None``: none."""
    if expected is None:
        return []
    if isinstance(expected, (list, tuple)):
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
