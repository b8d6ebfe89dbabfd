"""The conversation metrics on the messages the mappers read from real corpus traces."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evald.config.loader import parse_config
from evald.replay import replay

CORPUS = Path(__file__).resolve().parents[2] / "testdata" / "corpus"

CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: turn_count, scope: trace, options: { max_turns: 1 } }
  - { kind: conversation_resolution, scope: trace, options: { resolved_patterns: ["partly cloudy", "Paris"] } }
"""


@pytest.mark.parametrize("source", ["otel-openai-v2.span_only", "openinference-openai", "traceloop-openai"])
def test_tool_call_trace(source: str) -> None:
    result = asyncio.run(replay([CORPUS / source / "c_tool_call.pb"], parse_config(CONFIG, "test", environ={})))
    # OpenLLMetry without a wrapping span exports each call as its own trace: the one that answered is the turn
    [scored] = [c for c in result.scored if c.case.scope == "trace" and c.case.output]
    by_name = {s.name: s for s in scored.scores}
    turns = by_name["turn_count"]
    # one user question ("What's the weather in Paris right now?"), answered after one get_weather call
    assert turns.value == 1.0 and turns.metadata["user_turns"] == 1 and turns.metadata["tool_messages"] >= 1
    resolution = by_name["conversation_resolution"]
    # the final answer is "It is currently 18°C and partly cloudy in Paris."
    assert resolution.value == 1.0 and resolution.metadata["matched_pattern"] == "partly cloudy"
