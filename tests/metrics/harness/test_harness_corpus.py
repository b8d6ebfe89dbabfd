"""harness-evals metrics in a replay of real corpus traces score what the harness metrics score on their own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from harness_evals.core.eval_case import EvalCase as HarnessCase
from harness_evals.metrics import LatencyMetric, PIIMetric, TokenCostMetric

from evald.config.loader import parse_config
from evald.model import ScoredCase
from evald.replay import replay

CORPUS = Path(__file__).resolve().parents[2] / "testdata" / "corpus" / "otel-openai-v2.span_only"

CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: "harness:PIIMetric", scope: trace }
  - { kind: "harness:TokenCostMetric", scope: all, options: { max_tokens: 1000 } }
  - { kind: "harness:LatencyMetric", scope: trace, threshold: 1, options: { max_ms: 60000 } }
"""


def trace_case(file: str) -> ScoredCase:
    result = asyncio.run(replay([CORPUS / file], parse_config(CONFIG, "test", environ={})))
    [case] = [c for c in result.scored if c.case.scope == "trace"]
    assert not case.errors and not case.skipped
    return case


@pytest.mark.parametrize(("file", "pii_free"), [("a_chat_correct.pb", True), ("c_tool_call.pb", True),
                                                ("e_pii.pb", False)])
def test_corpus_scores_equal_the_harness_metrics_on_their_own(file: str, pii_free: bool) -> None:
    scored = trace_case(file)
    case = scored.case
    by_name = {s.name: s for s in scored.scores}
    # the same trace, written by hand as harness-evals wants it
    harness_case = HarnessCase(input=str(case.input), output=case.output, token_count=case.token_count,
                               latency_ms=case.latency_ms)
    for kind, harness_metric in (("harness:PIIMetric", PIIMetric()),
                                 ("harness:TokenCostMetric", TokenCostMetric(max_tokens=1000)),
                                 ("harness:LatencyMetric", LatencyMetric(max_ms=60000))):
        expected = harness_metric.measure(harness_case)
        assert (by_name[kind].value, by_name[kind].reason) == (expected.value, expected.reason), kind
        assert dict(by_name[kind].metadata) == (expected.metadata or {}), kind
    assert by_name["harness:PIIMetric"].passed is pii_free  # e_pii's answer holds an e-mail address and a phone
    assert by_name["harness:PIIMetric"].dimension.value == "safety"


def test_e_pii_hand_checked() -> None:
    scored = trace_case("e_pii.pb")
    by_name = {s.name: s for s in scored.scores}
    pii = by_name["harness:PIIMetric"]
    assert pii.value == 0.0 and pii.metadata["pii_types_found"] == ["email", "phone"]
    # 58 tokens against a budget of 1000: 1 - 58 / 1000 = 0.942
    assert scored.case.token_count == 58 and by_name["harness:TokenCostMetric"].value == pytest.approx(0.942)
