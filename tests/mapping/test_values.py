"""Attribute value normalisation: structured strings, numbers from garbage, escaped text, documents."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evald.case import Document
from evald.mapping.values import (
    as_count,
    as_dict,
    as_float,
    as_int,
    as_list,
    as_str,
    as_text,
    decode_escapes,
    documents,
    is_object_repr,
    parse_json_container,
    parse_structured,
    str_list,
)
from evald.semconv import normalize_provider, operation_of


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('[{"role": "user", "content": "hi"}]', [{"role": "user", "content": "hi"}]),
        ("[{'role': 'user', 'content': 'hi'}]", [{"role": "user", "content": "hi"}]),  # gen_ai.prompt example
        ("{'a': (1, 2), 3: None}", {"a": [1, 2], "3": None}),
        ('  {"x": "caf\\u00e9"}  ', {"x": "café"}),
        ([{"already": "parsed"}], [{"already": "parsed"}]),
        ({"k": 1}, {"k": 1}),
        (("a", "b"), ["a", "b"]),
        (b'[1, 2]', [1, 2]),
        ("plain text", "plain text"),
        ("42", "42"),
        ("true", "true"),
        ("[unclosed", "[unclosed"),
        ("{'x': __import__('os')}", "{'x': __import__('os')}"),  # never evaluated
        ("", ""),
        (None, None),
        (3.5, 3.5),
    ],
)
def test_parse_structured(raw: Any, expected: Any) -> None:
    assert parse_structured(raw) == expected


def test_parse_structured_survives_deep_nesting_and_huge_input() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_structured(deep) in (deep, [])  # json may or may not cope; never raises
    huge = "[" + "'x'," * 100_000 + "]"
    assert parse_structured(huge) == huge  # too large for literal_eval, not JSON: kept as text


def test_parse_json_container_keeps_scalars_as_text() -> None:
    assert parse_json_container('{"city": "Paris"}') == {"city": "Paris"}
    assert parse_json_container("[1]") == [1]
    assert parse_json_container('"quoted"') == '"quoted"'
    assert parse_json_container("18") == "18"
    assert parse_json_container(None) is None


def test_decode_escapes_only_touches_non_ascii() -> None:
    assert decode_escapes("18\\u00b0C") == "18°C"
    assert decode_escapes("smile \\ud83d\\ude00") == "smile \U0001f600"
    assert decode_escapes("keep \\u0041 and \\n") == "keep \\u0041 and \\n"
    assert decode_escapes("lone \\udc00") == "lone \\udc00"
    assert decode_escapes("no escapes") == "no escapes"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(12, 12), ("12", 12), (" 7 ", 7), (12.0, 12), ("12.0", 12), ("1e3", 1000), (12.5, None), ("abc", None),
     (True, None), (False, None), (None, None), ("", None), (math.nan, None), (math.inf, None), ("9" * 5000, None),
     ([1], None), (-3, -3)],
)
def test_as_int(raw: Any, expected: int | None) -> None:
    assert as_int(raw) == expected


def test_as_count_rejects_negative() -> None:
    assert as_count(-1) is None
    assert as_count("-5") is None
    assert as_count("0") == 0
    assert as_count(True) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.5, 0.5), (1, 1.0), ("0.25", 0.25), ("x", None), (True, None), ("nan", None), (10**400, None), (None, None)],
)
def test_as_float(raw: Any, expected: float | None) -> None:
    assert as_float(raw) == expected


def test_as_str_and_as_text() -> None:
    assert as_str("id-1") == "id-1"
    assert as_str("  ") is None
    assert as_str(7) == "7"
    assert as_str(True) is None
    assert as_str(b"x") == "x"
    assert as_str({"a": 1}) is None
    assert as_text("It is 18\\u00b0C") == "It is 18°C"
    assert as_text(5) is None
    assert as_text("   ") is None


def test_as_list_as_dict_str_list() -> None:
    assert as_list('["a"]') == ["a"]
    assert as_list("a") is None
    assert as_dict("{'a': 1}") == {"a": 1}
    assert as_dict("[1]") is None
    assert str_list(["stop", 3, "length"]) == ["stop", "length"]
    assert str_list('["stop"]') == ["stop"]
    assert str_list("stop") == ["stop"]
    assert str_list(None) == []


def test_documents() -> None:
    raw = '[{"id":"kb-001","score":0.72},{"id":2,"score":"0.3","text":"t","metadata":{"s":"a"}},"bare",7]'
    assert documents(raw) == [
        Document(id="kb-001", score=0.72),
        Document(id="2", content="t", score=0.3, metadata={"s": "a"}),
        Document(content="bare"),
    ]
    assert documents("not a list") is None
    assert documents([]) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("openai", "openai"), ("OpenAI", "openai"), ("xai", "x_ai"), ("vertex_ai", "gcp.vertex_ai"),
     ("gemini", "gcp.gemini"), ("az.ai.inference", "azure.ai.inference"), ("az.ai.openai", "azure.ai.openai"),
     ("Anthropic", "anthropic"), ("MistralAI", "mistral_ai"), ("", None), (None, None), (3, None)],
)
def test_normalize_provider(raw: Any, expected: str | None) -> None:
    assert normalize_provider(raw) == expected


def test_operation_of() -> None:
    assert operation_of({"gen_ai.operation.name": "chat"}) == "chat"
    assert operation_of({"llm.request.type": "completion"}) == "text_completion"
    assert operation_of({"llm.request.type": "embedding"}) == "embeddings"
    assert operation_of({"gen_ai.system": "openai", "gen_ai.usage.prompt_tokens": 3}) == "chat"
    assert operation_of({"gen_ai.system": "openai"}, frozenset({"gen_ai.choice"})) == "chat"
    assert operation_of({"gen_ai.system": "openai"}) is None
    assert operation_of({"http.method": "GET"}) is None
    assert operation_of({"gen_ai.operation.name": 5}) is None


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(json_like)
def test_helpers_are_total(value: Any) -> None:
    for helper in (parse_structured, parse_json_container, as_str, as_text, as_int, as_count, as_float, as_list,
                   as_dict, str_list, documents):
        helper(value)


@given(st.text(alphabet="[]{}()'\",:0123456789abcTrueNone\\u ", max_size=60))
def test_parse_structured_never_raises_on_bracket_soup(text: str) -> None:
    parse_structured(text)
    parse_structured("[" + text)


@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2003\u2028\u3000\u200bax"), max_size=8))
def test_blank_is_decided_like_strip(text: str) -> None:
    """``as_str``/``as_text`` test blankness without building a stripped copy; the answer is strip()'s."""
    assert (as_str(text) is None) == (not text.strip())
    assert (as_text(text) is None) == (not text.strip())


def test_python_literals_with_invalid_escapes_parse_without_a_warning() -> None:
    import warnings

    from evald.mapping.values import parse_structured

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_structured("{'path': 'C:\\other'}") == {"path": "C:\\other"}


@pytest.mark.parametrize(("text", "expected"), [
    ("StopEvent(result=AgentOutput(response=...", True),
    ("AgentOutput()", True),
    ("<groq.Stream object at 0x7f3f2d2d6690>", True),
    ("<b>Bold</b> object at the end", False),
    ("Paris is the capital (of France).", False),
    ("The answer is Foo(bar=1).", False),
    ("print(x=1)", False),
    ("", False),
])
def test_is_object_repr(text: str, expected: bool) -> None:
    assert is_object_repr(text) is expected
