"""turn_latency, turn_token_cost and cost_efficiency: hand-computed values, and harness-evals' classes on the same
per-turn data (harness-evals reads them from its Message fields)."""

from __future__ import annotations

import pytest
from harness_evals import EvalCase as HEvalCase
from harness_evals import Message as HMessage
from harness_evals.metrics import CostEfficiencyMetric as HCostEfficiency
from harness_evals.metrics.operational.turn_latency import TurnLatencyMetric as HTurnLatency
from harness_evals.metrics.operational.turn_token_cost import TurnTokenCostMetric as HTurnTokenCost

from evald.case import EvalCase, Message
from evald.metrics.operational.cost_efficiency import CostEfficiencyMetric
from evald.metrics.operational.turn_latency import TurnLatencyMetric
from evald.metrics.operational.turn_token_cost import TurnTokenCostMetric
from evald.pipeline.conversations import conversation_case


def _conversation(latencies: list[float | None], tokens: list[int | None]) -> EvalCase:
    turns = [EvalCase(input=f"q{i}", output=f"a{i}", latency_ms=lat, token_count=tok, trace_id=f"{i:032x}")
             for i, (lat, tok) in enumerate(zip(latencies, tokens, strict=True))]
    return conversation_case("c1", turns)


def _harness(latencies: list[float | None], tokens: list[int | None]) -> HEvalCase:
    messages = []
    for lat, tok in zip(latencies, tokens, strict=True):
        messages += [HMessage(role="user", content="q"), HMessage(role="assistant", content="a", latency_ms=lat,
                                                                  token_count=tok)]
    return HEvalCase(input="q", output="a", messages=messages)


@pytest.mark.parametrize(("latencies", "budget", "expected"), [
    ([1200.0, 2900.0, None], 3000.0, 1.0),
    ([1200.0, 3100.0], 3000.0, 0.0),
])
def test_turn_latency_all_turns_must_pass(latencies: list[float | None], budget: float, expected: float) -> None:
    case = _conversation(latencies, [None] * len(latencies))
    score = TurnLatencyMetric(options={"max_ms_per_turn": budget}).measure(case)
    assert score is not None and score.value == expected
    theirs = HTurnLatency(max_ms_per_turn=budget).measure(_harness(latencies, [None] * len(latencies)))
    assert score.value == theirs.value


def test_turn_token_cost_is_the_mean_per_turn_value() -> None:
    tokens: list[int | None] = [500, 1500, None]
    score = TurnTokenCostMetric().measure(_conversation([None] * 3, tokens))
    assert score is not None and score.value == pytest.approx((0.75 + 0.25) / 2)
    theirs = HTurnTokenCost().measure(_harness([None] * 3, tokens))
    assert score.value == pytest.approx(theirs.value, abs=1e-9)


def test_a_trace_case_is_one_turn_and_no_data_is_not_applicable() -> None:
    one = TurnLatencyMetric(options={"max_ms_per_turn": 50.0}).measure(EvalCase(latency_ms=100.0))
    assert one is not None and one.value == 0.0 and one.metadata["turn_latencies"] == [100.0]
    assert TurnLatencyMetric().measure(EvalCase(messages=(Message("assistant", "x"),))) is None
    score = TurnTokenCostMetric().measure(EvalCase(input_tokens=300, output_tokens=100))
    assert score is not None and score.value == pytest.approx(1 - 400 / 2000)


@pytest.mark.parametrize("cost", [0.0, 0.03, 0.1, 0.25])
def test_cost_efficiency_matches_harness_evals(cost: float) -> None:
    score = CostEfficiencyMetric().measure(EvalCase(cost_usd=cost))
    assert score is not None and score.value == pytest.approx(max(0.0, 1 - cost / 0.10))
    assert score.value == pytest.approx(HCostEfficiency().measure(HEvalCase(input="", output="", cost_usd=cost)).value)


def test_cost_efficiency_prices_tokens_like_cost() -> None:
    options = {"max_cost_usd": 0.01, "prices": {"m": {"input": 1.0, "output": 2.0}}}
    score = CostEfficiencyMetric(options=options).measure(EvalCase(model="m", input_tokens=1000, output_tokens=1000))
    assert score is not None and score.value == pytest.approx(1 - 0.003 / 0.01)
    assert CostEfficiencyMetric().measure(EvalCase(model="unknown-model", input_tokens=1, output_tokens=1)) is None
