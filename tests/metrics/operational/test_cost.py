from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase
from evald.metrics.operational.cost import CostMetric
from evald.pricing import find_price, shipped_prices


def test_prices_are_computed_from_the_shipped_table_for_a_dated_model() -> None:
    # the corpus' gpt-4o-mini-2024-07-18 call: 27 input and 31 output tokens at $0.15 / $0.60 per 1M:
    # (27 * 0.15 + 31 * 0.60) / 1e6 = (4.05 + 18.6) / 1e6 = 0.00002265 USD
    case = EvalCase(model="gpt-4o-mini-2024-07-18", request_model="gpt-4o-mini", input_tokens=27, output_tokens=31)
    score = CostMetric(options={"max_usd": 0.01}).measure(case)
    assert score is not None and score.passed and score.value == 1.0
    assert score.dimension is Dimension.PERFORMANCE and score.threshold == 0.5
    assert score.metadata["cost_usd"] == pytest.approx(0.00002265)
    assert score.metadata | {"cost_usd": 0} == {
        "cost_usd": 0, "source": "prices", "price_model": "gpt-4o-mini", "input_usd_per_1m": 0.15,
        "output_usd_per_1m": 0.6, "max_usd": 0.01,
    }
    assert score.reason == "cost $0.000023 is within the $0.01 budget"


def test_over_budget_fails_in_step_mode() -> None:
    # claude-sonnet-4-5 at $3 / $15: (100_000 * 3 + 20_000 * 15) / 1e6 = (300_000 + 300_000) / 1e6 = $0.60
    case = EvalCase(model="claude-sonnet-4-5-20250929", input_tokens=100_000, output_tokens=20_000)
    score = CostMetric(options={"max_usd": 0.5}).measure(case)
    assert score is not None and not score.passed and score.value == 0.0
    assert score.metadata["cost_usd"] == pytest.approx(0.60)
    assert score.reason == "cost $0.600000 is over the $0.5 budget"


def test_linear_mode_reuses_the_budget_helper() -> None:
    # $0.60 between target $0.20 and max $1.00: 1 - (0.60 - 0.20) / (1.00 - 0.20) = 1 - 0.5 = 0.5
    case = EvalCase(cost_usd=0.60)
    score = CostMetric(options={"max_usd": 1.0, "target_usd": 0.2, "mode": "linear"}).measure(case)
    assert score is not None and score.value == pytest.approx(0.5) and score.passed


def test_span_cost_wins_over_prices() -> None:
    case = EvalCase(cost_usd=0.25, model="gpt-4o", input_tokens=1, output_tokens=1)
    score = CostMetric(options={"max_usd": 1}).measure(case)
    assert score is not None and score.metadata == {"cost_usd": 0.25, "source": "span", "max_usd": 1.0}


def test_a_negative_span_cost_is_no_cost_for_either_metric() -> None:
    """Garbage cost_usd (negative) is not a cost: both cost kinds price the tokens instead, or do not apply."""
    from evald.metrics.operational.cost_efficiency import CostEfficiencyMetric

    # gpt-4o-mini: (1_000_000 * 0.15 + 0) / 1e6 = 0.15 USD
    priced = EvalCase(cost_usd=-5.0, model="gpt-4o-mini", input_tokens=1_000_000, output_tokens=0)
    for metric in (CostMetric(options={"max_usd": 1}), CostEfficiencyMetric()):
        score = metric.measure(priced)
        assert score is not None and score.metadata["source"] == "prices"
        assert score.metadata["cost_usd"] == pytest.approx(0.15)
        assert metric.measure(EvalCase(cost_usd=-5.0)) is None


def test_prices_option_overrides_and_extends_the_table() -> None:
    options: dict[str, Any] = {"max_usd": 1, "prices": {"gpt-4o": {"input": 1, "output": 2},
                                                        "my-llama": {"input": 0.5, "output": 0.5}}}
    metric = CostMetric(options=options)
    # (1_000_000 * 1 + 500_000 * 2) / 1e6 = 2.0 USD: over the budget
    over = metric.measure(EvalCase(model="gpt-4o-2024-08-06", input_tokens=1_000_000, output_tokens=500_000))
    assert over is not None and over.metadata["cost_usd"] == pytest.approx(2.0) and not over.passed
    own = metric.measure(EvalCase(model="my-llama", input_tokens=1_000_000, output_tokens=0))
    assert own is not None and own.metadata["cost_usd"] == pytest.approx(0.5)
    # an option key that differs only in case still overrides the shipped price
    upper = CostMetric(options={"max_usd": 1, "prices": {"GPT-4O": {"input": 1, "output": 2}}})
    score = upper.measure(EvalCase(model="gpt-4o", input_tokens=1_000_000, output_tokens=0))
    assert score is not None and score.metadata["price_model"] == "GPT-4O"
    assert score.metadata["cost_usd"] == pytest.approx(1.0)


def test_model_matching() -> None:
    prices = shipped_prices().models
    assert find_price("gpt-4o", prices) == ("gpt-4o", prices["gpt-4o"])  # exact
    assert find_price("GPT-4o-Mini-2024-07-18", prices) == ("gpt-4o-mini", prices["gpt-4o-mini"])  # longest prefix
    assert find_price("claude-opus-4-1-20250805", prices) == ("claude-opus-4-1", prices["claude-opus-4-1"])
    assert find_price("claude-opus-4-20250514", prices) == ("claude-opus-4", prices["claude-opus-4"])
    assert find_price("openai/gpt-4.1-mini", prices) == ("gpt-4.1-mini", prices["gpt-4.1-mini"])  # vendor prefix
    assert find_price("us.anthropic.claude-3-5-haiku-20241022-v1:0", prices) is not None
    assert find_price("gpt-4o1", prices) is None  # a prefix must end at a separator
    assert find_price("llama-3-70b", prices) is None


def test_request_model_is_the_fallback() -> None:
    case = EvalCase(model="custom-deployment", request_model="gpt-4o", input_tokens=1000, output_tokens=0)
    score = CostMetric(options={"max_usd": 1}).measure(case)
    assert score is not None and score.metadata["price_model"] == "gpt-4o"  # 1000 * 2.50 / 1e6 = 0.0025
    assert score.metadata["cost_usd"] == pytest.approx(0.0025)


@pytest.mark.parametrize(("case", "logged"), [
    (EvalCase(input_tokens=1, output_tokens=1), "no model name"),
    (EvalCase(model="gpt-4o", input_tokens=1), "token count missing"),
    (EvalCase(model="mystery-model", input_tokens=1, output_tokens=1), "no price for model"),
    (EvalCase(), "no model name"),
])
def test_not_applicable_is_logged_at_debug(case: EvalCase, logged: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="evald.metrics.operational.cost"):
        assert CostMetric(options={"max_usd": 1}).measure(case) is None
    assert logged in caplog.text


def test_the_shipped_table_is_dated() -> None:
    table = shipped_prices()
    assert table.as_of and len(table.models) >= 10
    assert {"gpt-4o-mini", "claude-sonnet-4-5"} <= set(table.models)


@pytest.mark.parametrize("options", [
    {}, {"max_usd": 0}, {"max_usd": 1, "target_usd": 1}, {"max_usd": 1, "prices": {"m": {"input": -1, "output": 1}}},
    {"max_usd": 1, "prices": {"m": {"input": 1}}}, {"max_usd": 1, "extra": 1},
])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        CostMetric(options=options)
