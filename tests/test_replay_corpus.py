"""``evald replay`` on every GenAI-semconv corpus file, asserted against the corpus manifest's ground truth.

Unlike tests/mapping (which drives the mapper directly), this goes through the file reader, the assembly window,
mapping, the metrics and the in-memory exporter: the same path `evald replay` takes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evald.config.loader import parse_config
from evald.model import ScoredCase
from evald.replay import ReplayResult, replay

CORPUS = Path(__file__).resolve().parent / "testdata" / "corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
ENTRIES = [e for e in MANIFEST["files"] if e["instrumentation"].startswith("otel-openai-v2")]

CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: error_free, scope: all }
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
  - { kind: token_usage, scope: all, options: { max_tokens: 100000 } }
"""


def _companions(entry: dict[str, Any]) -> list[Path]:
    pb = CORPUS / entry["file"]
    logs = pb.with_name(pb.name.replace(".pb", ".logs.pb"))
    return [pb, logs] if logs.exists() else [pb]


@pytest.fixture(scope="module")
def replayed() -> dict[str, ReplayResult]:
    config = parse_config(CONFIG, "test", environ={})
    out: dict[str, ReplayResult] = {}
    for entry in ENTRIES:
        out[entry["file"]] = asyncio.run(replay(_companions(entry), config))
    return out


def _trace_case(result: ReplayResult) -> ScoredCase | None:
    cases = [c for c in result.scored if c.case.scope == "trace"]
    assert len(cases) <= 1
    return cases[0] if cases else None


def test_the_semconv_corpus_is_complete() -> None:
    assert len(ENTRIES) == 16
    assert {e["instrumentation"] for e in ENTRIES} == {"otel-openai-v2.span_only", "otel-openai-v2.event_only"}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"])
def test_replayed_trace_case_matches_ground_truth(entry: dict[str, Any], replayed: dict[str, ReplayResult]) -> None:
    gt = entry["ground_truth"]
    result = replayed[entry["file"]]
    assert not result.skipped_files
    scored = _trace_case(result)
    if gt["llm_call_count"] == 0:  # embeddings only: no inference span, reported as not evaluable
        assert scored is None
        return
    assert scored is not None
    case = scored.case
    assert case.output == (None if gt["error"] else gt["final_output"])
    assert case.input in (gt["user_input"], gt["user_message_sent"])
    assert case.model == gt["response_model"]
    assert case.request_model == gt["request_model"]
    assert case.error is gt["error"]
    if not gt["error"]:
        assert (case.input_tokens, case.output_tokens) == (gt["input_tokens"], gt["output_tokens"])
    assert [t.name for t in case.tool_calls] == [t["name"] for t in gt["tool_calls"]]
    assert len([c for c in result.scored if c.case.scope == "llm_call"]) == gt["llm_call_count"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"])
def test_replayed_scores_follow_the_ground_truth(entry: dict[str, Any], replayed: dict[str, ReplayResult]) -> None:
    gt = entry["ground_truth"]
    scored = _trace_case(replayed[entry["file"]])
    if scored is None:
        return
    by_name = {s.name: s for s in scored.scores}
    assert by_name["error_free"].passed is (not gt["error"])
    skipped = dict(scored.skipped)
    if gt["error"]:
        assert "contains" in skipped  # no output: not applicable, never a 0
    else:
        assert by_name["contains"].passed is ("Paris" in gt["final_output"])
