"""``cost``: the case's spend in USD stayed within a budget, priced from a model price table."""

from __future__ import annotations

import logging
import math
from typing import ClassVar, Protocol, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.operational.latency import BudgetMode, budget_value
from evald.pricing import TOKENS_PER_UNIT, ModelPrice, fold_prices, lookup_price, shipped_prices

#: the price table moved to evald/pricing.py (neutral: the judges' budgets use it too); its names stay importable here
__all__ = ["CostMetric", "CostOptions", "ModelPrice", "fold_prices", "lookup_price", "shipped_prices"]

logger = logging.getLogger(__name__)


class CostOptions(ComponentConfig):
    max_usd: float = Field(gt=0, description="cost budget per case in USD (required)")
    mode: BudgetMode = Field("step", description="step: 1 up to max_usd, else 0; linear: decays from target_usd")
    target_usd: float = Field(0.0, ge=0, description="linear mode: cost that still scores 1 (below max_usd)")
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="extra or overriding model prices: {model: {input: USD per 1M tokens, output: USD per 1M}}",
    )

    @model_validator(mode="after")
    def _target_below_max(self) -> Self:
        if self.target_usd >= self.max_usd:
            raise ValueError(f"target_usd ({self.target_usd:g}) must be below max_usd ({self.max_usd:g})")
        return self


class PricedOptions(Protocol):
    """What ``CostMetric.setup`` reads of its options: ``cost``'s and ``cost_efficiency``'s both have it."""

    prices: dict[str, ModelPrice]


class CostMetric(BaseMetric):
    """Whether the case's cost in USD stays within ``max_usd``.

    Uses ``cost_usd`` when the span already carries a cost. Otherwise prices ``input_tokens`` and
    ``output_tokens`` with the model's USD-per-1M-token prices: ``model`` (the response model) is looked up
    first, then ``request_model``, in the shipped table ``evald/metrics/operational/prices.yaml`` (a few OpenAI
    and Anthropic models; its ``as_of`` date says when the prices were compiled) merged with option ``prices``
    (which wins). A model matches a key exactly (case-insensitively), else the longest key that is a prefix of
    it followed by ``-``, ``@``, ``:`` or ``_``, so ``gpt-4o-mini-2024-07-18`` is priced as ``gpt-4o-mini``; a
    vendor prefix such as ``openai/`` is ignored. For a trace, the trace's token totals are priced at its
    model's price. Cached-token and batch discounts are not modelled.

    The budget works like ``token_usage``: mode ``step`` scores 1 up to ``max_usd`` and 0 above; ``linear``
    scores 1 up to ``target_usd``, falling linearly to 0 at ``max_usd``; default threshold 0.5.
    ``metadata`` carries ``cost_usd``, its ``source`` (``span`` or ``prices``), and for a priced case the
    matched ``price_model`` and the per-1M prices.

    Not applicable (the reason is logged at debug level) when there is no ``cost_usd`` and either the model
    has no price or ``input_tokens`` / ``output_tokens`` is missing.
    """

    kind: ClassVar[str] = "cost"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("cost_usd", "model", "request_model", "input_tokens", "output_tokens")
    needs: ClassVar[tuple[str, ...]] = ("cost_usd|input_tokens|output_tokens",)
    Options: ClassVar[type[ComponentConfig]] = CostOptions

    def setup(self) -> None:
        self._prices = fold_prices({**shipped_prices().models, **cast(PricedOptions, self.options).prices})

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(CostOptions, self.options)
        found = self._cost(eval_case)
        if found is None:
            return None
        cost, metadata = found
        value = budget_value(cost, opts.max_usd, opts.target_usd, opts.mode)
        relation = "within" if cost <= opts.max_usd else "over"
        return self.score(
            value, f"cost ${cost:.6f} is {relation} the ${opts.max_usd:g} budget", **metadata, max_usd=opts.max_usd,
        )

    def _cost(self, eval_case: EvalCase) -> tuple[float, dict[str, object]] | None:
        """The case's cost and where it came from: the span's ``cost_usd`` when it is a usable amount (finite, not
        negative: anything else is garbage, not a cost), else the token counts priced; None when neither exists."""
        cost = eval_case.cost_usd
        if cost is not None and math.isfinite(cost) and cost >= 0:
            return cost, {"cost_usd": cost, "source": "span"}
        return self._priced(eval_case)

    def _priced(self, eval_case: EvalCase) -> tuple[float, dict[str, object]] | None:
        models = [m for m in (eval_case.model, eval_case.request_model) if m]
        if not models:
            logger.debug("cost: not applicable to %s: no cost_usd and no model name", eval_case.trace_id)
            return None
        if eval_case.input_tokens is None or eval_case.output_tokens is None:
            logger.debug("cost: not applicable to %s: input or output token count missing", eval_case.trace_id)
            return None
        found = next((p for p in (lookup_price(m, self._prices) for m in models) if p is not None), None)
        if found is None:
            logger.debug("cost: not applicable to %s: no price for model(s) %s", eval_case.trace_id, models)
            return None
        key, price = found
        cost = (eval_case.input_tokens * price.input + eval_case.output_tokens * price.output) / TOKENS_PER_UNIT
        return cost, {
            "cost_usd": cost, "source": "prices", "price_model": key,
            "input_usd_per_1m": price.input, "output_usd_per_1m": price.output,
        }
