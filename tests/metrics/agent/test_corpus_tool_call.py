"""The agent metrics on a real trace: the GenAI-semconv corpus scenario ``c_tool_call`` (the model calls
``get_weather(city="Paris")``), replayed through ``evald replay``'s path (reader, assembly, mapping, metrics)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evald.config.loader import parse_config
from evald.model import ScoredCase
from evald.replay import replay

CORPUS = Path(__file__).resolve().parents[2] / "testdata" / "corpus"
ENTRIES = [e for e in json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["files"]
           if e["scenario"] == "c_tool_call" and e["instrumentation"].startswith("otel-openai-v2")]

CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: tool_called, options: { tool: "get_*" } }
  - { kind: tool_not_called, options: { tool: "delete_*" } }
  - kind: tool_argument_match
    options: { expected_calls: [ { name: get_weather, arguments: { city: Paris } } ] }
  - kind: tool_argument_match
    name: wrong_city
    options: { expected_calls: [ { name: get_weather, arguments: { city: Lyon } } ] }
  - { kind: tool_called_with, options: { tool: get_weather, arguments: { city: Paris } } }
  - kind: args_valid
    options: { strict: true, policy: { tools: { get_weather: { arguments: { city: { type: string,
               required: true, pattern: "^[A-Z]" } } } } } }
  - { kind: steps_below, options: { max_steps: 1 } }
  - { kind: tool_correctness }
"""


def _trace_case(entry: dict[str, Any]) -> ScoredCase:
    pb = CORPUS / entry["file"]
    logs = pb.with_name(pb.name.replace(".pb", ".logs.pb"))
    result = asyncio.run(replay([pb, logs] if logs.exists() else [pb], parse_config(CONFIG, "test", environ={})))
    (scored,) = [c for c in result.scored if c.case.scope == "trace"]
    return scored


def test_the_corpus_has_the_scenario() -> None:
    assert len(ENTRIES) == 2
    for entry in ENTRIES:
        assert [(c["name"], c["arguments"]) for c in entry["ground_truth"]["tool_calls"]] == [
            ("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["instrumentation"])
def test_agent_metrics_on_the_tool_call_trace(entry: dict[str, Any]) -> None:
    scored = _trace_case(entry)
    assert [(c.name, c.arguments) for c in scored.case.tool_calls] == [("get_weather", {"city": "Paris"})]
    scores = {s.name: s for s in scored.scores}
    for name in ("tool_called", "tool_not_called", "tool_argument_match", "tool_called_with", "args_valid",
                 "steps_below"):
        assert scores[name].value == 1.0 and scores[name].passed, (name, scores[name].reason)
    assert scores["tool_called"].reason == "'get_*' called 1 time(s), first at index 0"
    wrong = scores["wrong_city"]
    assert wrong.value == 0.0 and not wrong.passed
    assert wrong.metadata["violations"] == [{
        "rule": "argument_match", "tool": "get_weather", "index": 0, "argument": "city", "value": "Paris",
        "expected": "Lyon", "constraint": "equals", "message": 'get_weather (index 0): city = "Paris", expected "Lyon"',
    }]
    # the trace carries no expected tools: tool_correctness is not applicable (skipped, never a 0)
    assert "tool_correctness" in dict(scored.skipped) and "tool_correctness" not in scores
