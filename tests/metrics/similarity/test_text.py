from __future__ import annotations

from typing import Any

import pytest

from evald.metrics.similarity.text import normalize_whitespace, references, word_tokens
from evald.metrics.text import as_text, optional_text


@pytest.mark.parametrize(
    ("value", "text"),
    [("plain", "plain"), (42, "42"), ({"city": "東京"}, '{"city": "東京"}'), ([1, "a"], '[1, "a"]'), (None, "null")],
)
def test_as_text(value: Any, text: str) -> None:
    assert as_text(value) == text


def test_optional_text_keeps_none_and_empty_apart() -> None:
    assert optional_text(None) is None
    assert optional_text("") == ""
    assert optional_text({"a": 1}) == '{"a": 1}'


def test_references() -> None:
    assert references(None) == []
    assert references("Paris") == ["Paris"]
    assert references(["Paris", None, 3]) == ["Paris", "3"]
    assert references(("a", "b")) == ["a", "b"]
    assert references({"a": 1}) == ['{"a": 1}']


def test_word_tokens_drop_punctuation_and_fold_case() -> None:
    assert word_tokens("The cat's mat, 2024! Straße") == ["the", "cat", "s", "mat", "2024", "strasse"]
    assert word_tokens("The Cat", lowercase=False) == ["The", "Cat"]
    assert word_tokens("cafe\u0301") == ["caf\u00e9"]  # NFC first: one token
    assert word_tokens("  ... ") == []


def test_normalize_whitespace() -> None:
    assert normalize_whitespace("  a \t b\n\nc ") == "a b c"
