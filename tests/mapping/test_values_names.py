"""parse_structured's shortcut for text that starts with a bracket and then a name (``[kb-001] ...``,
``{key}: {value}``): it must only skip parses that would fail, so the result is the one the parsers give."""

from __future__ import annotations

import ast
import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evald.mapping.values import _starts_with_a_name, parse_structured

_PIECES = ["[", "{", "(", " ", "\n", "\t", "\f", "kb", "True", "False", "None", "set", "set()", "true", "null",
           "NaN", "Infinity", "r", "b", "rb", "f", "'x'", '"y"', ",", ":", "]", "}", ")", "-", "1", "0x1", "j", "#",
           "\\\n", "# c\n", "# c\r", "_", "not ", "lambda", "é", "\U0001d42c\U0001d41e\U0001d42d", "x", "+", ".", "...",
           "*", "u", "Ellipsis", "if", "else", "for", "in"]


def _accepts(text: str) -> bool:
    for parse in (json.loads, ast.literal_eval):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parse(text)
        except Exception:
            continue
        return True
    return False


@pytest.mark.parametrize(("text", "skipped"), [
    ("[kb-001] Refund policy: annual plans can be refunded.", True),
    ("{key}: {value}", True),
    ("{metadata_str}\n\n{content}", True),
    ("(x for x in y)", True),
    ("[[ ## answer ## ]]\nParis", True),  # DSPy's field markers: a comment, then a name
    ("[ # a comment\n 1]", False),
    ("[1, # a comment\n kb]", False),  # only the first element is looked at
    ("[True, None]", False),
    ("[set()]", False),
    ("[r'a']", False),  # a string prefix
    ("[NaN]", False),
    ('"quoted"', False),
    ("[\U0001d42c\U0001d41e\U0001d42d()]", False),  # a non-ASCII name (NFKC makes it ``set``)
])
def test_names_that_no_literal_starts_with(text: str, skipped: bool) -> None:
    assert _starts_with_a_name(text) is skipped
    if skipped:
        assert not _accepts(text)
        assert parse_structured(text) == text


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from("[{("), st.lists(st.sampled_from(_PIECES), max_size=7))
def test_a_skipped_text_is_one_both_parsers_refuse(opener: str, pieces: list[str]) -> None:
    text = opener + "".join(pieces)
    if _starts_with_a_name(text):
        assert not _accepts(text)
        assert parse_structured(text) == text


def test_parse_structured_still_parses_python_reprs() -> None:
    assert parse_structured("[{'type': 'text', 'text': 'hi'}]") == [{"type": "text", "text": "hi"}]
    assert parse_structured("(True, None)") == [True, None]
    assert parse_structured("[kb-001] Refund") == "[kb-001] Refund"
