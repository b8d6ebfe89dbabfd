"""References for online cases: span attributes, then goldens matched by input, then nothing (never a 0)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evald.case import EvalCase
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.model import AssembledTrace, SpanRecord
from evald.pipeline.goldens import ReferenceResolver, load_goldens, normalise_input
from evald.replay import replay

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(span_id: str, parent: str | None = None, **attributes: object) -> SpanRecord:
    return SpanRecord(trace_id=TRACE, span_id=span_id, parent_span_id=parent, name="s", kind=1,
                      start_time_unix_nano=1, end_time_unix_nano=2, attributes=attributes)


def test_normalise_input_ignores_case_spacing_and_final_punctuation() -> None:
    assert normalise_input("  What is  the Capital of\nFRANCE? ") == "what is the capital of france"
    assert normalise_input("Ｐａｒｉｓ!") == "paris"  # NFKC folds full-width letters


def _reference_normalise(text: str) -> str:
    """The rule as docs state it, written the plain way: NFKC, casefold, runs of \\s to one space, strip, then
    trailing ?!. and whitespace removed."""
    folded = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded.rstrip("?!. ").strip()


_WHITESPACE = "".join(chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace())


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(), st.sampled_from(_WHITESPACE + "?!.ﬁＡé\u0301İ"))))
def test_normalise_input_is_the_plain_rule(text: str) -> None:
    """The fast path (str.split/join for the runs of \\s) gives what the plain rule gives, on any text,
    with every whitespace character, compatibility forms, combining marks and the final punctuation drawn often."""
    assert normalise_input(text) == _reference_normalise(text)


def test_load_jsonl_and_json_array(tmp_path: Path) -> None:
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_text('{"input": "Capital of France?", "expected": "Paris"}\n\n{"input": "2+2", "expected": "4"}\n')
    assert load_goldens(jsonl)["capital of france"]["expected"] == "Paris"
    array = tmp_path / "g.json"
    array.write_text(json.dumps([{"input": "2+2", "expected": "4", "expected_tools": ["calc"]}]))
    assert load_goldens(array)["2+2"]["expected_tools"] == ["calc"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"input": "a", "expected": "b"}\n{"input": "c", oops}\n', "line 2: not valid JSON"),
        ('{"expected": "b"}\n', "line 1: a golden must be an object with a non-empty string `input`"),
        ('[{"input": "a"}, 3]', "item 2: a golden must be an object"),
    ],
)
def test_bad_goldens_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_goldens(path)


def test_a_bad_goldens_file_is_a_config_error_with_its_yaml_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(f"goldens: {{ file: {tmp_path / 'missing.jsonl'} }}\n", environ={})
    assert [path for path, _ in info.value.problems] == ["goldens.file"]
    assert "cannot read goldens file" in info.value.report()


def test_span_attributes_win_over_goldens_and_goldens_fill_the_rest() -> None:
    resolver = ReferenceResolver({"capital of france": {
        "input": "Capital of France?", "expected": "Lyon", "expected_tools": ["search"],
        "metadata": {"k": 3, "relevant_ids": ["kb-9"]}, "context": ["kb-1"]}})
    trace = AssembledTrace(TRACE, (span("aa00000000000001", **{"evald.expected": "Paris"}),
                                   span("aa00000000000002", "aa00000000000001")))
    case = EvalCase(input="capital of  france", output="Paris", trace_id=TRACE, span_id="aa00000000000002",
                    scope="trace", metadata={"k": 5})
    resolved = resolver.resolve(case, trace)
    assert resolved.expected == "Paris"  # the root span's attribute beats the golden
    assert resolved.expected_tools == ("search",)  # no attribute: from the golden
    assert resolved.metadata["k"] == 5  # the case's own metadata is kept
    assert resolved.metadata["relevant_ids"] == ["kb-9"] and resolved.metadata["golden_context"] == ["kb-1"]
    assert resolved.metadata["golden"] is True


def test_llm_call_cases_read_only_their_own_span() -> None:
    trace = AssembledTrace(TRACE, (
        span("aa00000000000001", **{"evald.expected": "root answer"}),
        span("aa00000000000002", "aa00000000000001", **{"evald.expected_tools": '["get_weather", "search"]',
                                                        "evald.relevant_ids": "kb-001, kb-002"}),
    ))
    own = EvalCase(input="q", trace_id=TRACE, span_id="aa00000000000002", scope="llm_call")
    resolved = ReferenceResolver().resolve(own, trace)
    assert resolved.expected is None
    assert resolved.expected_tools == ("get_weather", "search")
    assert resolved.metadata["relevant_ids"] == ["kb-001", "kb-002"]


def test_no_reference_leaves_the_case_untouched() -> None:
    case = EvalCase(input="q", output="a", trace_id=TRACE, span_id="aa00000000000001", scope="trace")
    trace = AssembledTrace(TRACE, (span("aa00000000000001", **{"evald.expected": "  ", "other": 1}),))
    assert ReferenceResolver().resolve(case, trace) is case
    assert ReferenceResolver({"x": {"input": "x"}}).resolve(case, trace) is case


def test_corpus_with_goldens_from_the_manifest_scores_right_and_wrong_answers(tmp_path: Path) -> None:
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text("".join(
        json.dumps({"input": s["user"], "expected": s["expected_answer"]}) + "\n"
        for s in manifest["scenarios"].values() if s.get("expected_answer")))
    config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
goldens: {{ file: {goldens} }}
metrics:
  - {{ kind: contains, scope: trace }}
  - {{ kind: exact_match, scope: trace }}
""", environ={})
    span_only = CORPUS / "otel-openai-v2.span_only"
    outcomes = {}
    for scenario in ("a_chat_correct", "b_chat_wrong", "h_streaming_chat", "c_tool_call"):
        result = asyncio.run(replay([span_only / f"{scenario}.pb"], config))
        (scored,) = [c for c in result.scored if c.case.scope == "trace"]
        outcomes[scenario] = ({s.name: s.passed for s in scored.scores}, {name for name, _ in scored.skipped})
    assert outcomes["a_chat_correct"][0]["contains"] is True  # "The capital of France is Paris." contains Paris
    assert outcomes["h_streaming_chat"][0]["contains"] is True
    assert outcomes["b_chat_wrong"][0]["contains"] is False  # answered Saturn; expected Jupiter
    assert outcomes["a_chat_correct"][0]["exact_match"] is False  # a sentence is not exactly "Paris"
    assert outcomes["c_tool_call"] == ({}, {"contains", "exact_match"})  # no golden: not applicable, never 0
