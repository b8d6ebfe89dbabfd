"""turn_efficiency: expected / actual messages, capped at 1; harness-evals' class on the same case."""

from __future__ import annotations

import pytest
from harness_evals.metrics.conversation.turn_efficiency import TurnEfficiencyMetric as HTurnEfficiency

from evald.case import EvalCase, Message
from evald.metrics.conversation.turn_efficiency import TurnEfficiencyMetric
from evald.metrics.harness_case import to_harness_case


def _case(n: int, expected_turns: object = None) -> EvalCase:
    messages = tuple(Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(n))
    return EvalCase(input="m0", output="x", messages=messages,
                    metadata={} if expected_turns is None else {"expected_turns": expected_turns})


@pytest.mark.parametrize(("n", "expected_turns", "value"), [(6, 4, 4 / 6), (2, 4, 1.0), (4, 4, 1.0)])
def test_ratio_matches_harness_evals(n: int, expected_turns: int, value: float) -> None:
    case = _case(n, expected_turns)
    score = TurnEfficiencyMetric().measure(case)
    assert score is not None and score.value == pytest.approx(value)
    assert score.value == pytest.approx(HTurnEfficiency().measure(to_harness_case(case)).value)


def test_option_wins_and_missing_target_is_not_applicable() -> None:
    score = TurnEfficiencyMetric(options={"expected_turns": 3}).measure(_case(6, 6))
    assert score is not None and score.value == 0.5
    assert TurnEfficiencyMetric().measure(_case(6)) is None
    assert TurnEfficiencyMetric().measure(_case(6, "four")) is None
