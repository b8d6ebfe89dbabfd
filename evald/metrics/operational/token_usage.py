"""``token_usage``: the case stayed within a token budget."""

from __future__ import annotations

from typing import ClassVar, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.operational.latency import BudgetMode, budget_value


class TokenUsageOptions(ComponentConfig):
    max_tokens: int = Field(gt=0, description="token budget, input plus output (required)")
    mode: BudgetMode = Field("step", description="step: 1 up to max_tokens, else 0; linear: decays from target")
    target_tokens: int = Field(0, ge=0, description="linear mode: token count that still scores 1")

    @model_validator(mode="after")
    def _target_below_max(self) -> Self:
        if self.target_tokens >= self.max_tokens:
            raise ValueError(f"target_tokens ({self.target_tokens}) must be below max_tokens ({self.max_tokens})")
        return self


class TokenUsageMetric(BaseMetric):
    """Whether the case's token count stays within ``max_tokens``.

    Reads ``token_count``, or the sum of ``input_tokens`` and ``output_tokens`` when only those are known
    (for a trace: summed over its LLM calls). Mode ``step`` scores 1 up to ``max_tokens`` and 0 above;
    mode ``linear`` scores 1 up to ``target_tokens``, falling linearly to 0 at ``max_tokens``. The default
    threshold 0.5 makes ``step`` pass exactly within budget. The raw count is in ``metadata``.

    Not applicable when no token count is known.
    """

    kind: ClassVar[str] = "token_usage"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("token_count", "input_tokens", "output_tokens")
    needs: ClassVar[tuple[str, ...]] = ("token_count|input_tokens|output_tokens",)
    Options: ClassVar[type[ComponentConfig]] = TokenUsageOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(TokenUsageOptions, self.options)
        tokens = eval_case.token_count
        if tokens is None:
            known = [t for t in (eval_case.input_tokens, eval_case.output_tokens) if t is not None]
            if not known:
                return None
            tokens = sum(known)
        value = budget_value(tokens, opts.max_tokens, opts.target_tokens, opts.mode)
        relation = "within" if tokens <= opts.max_tokens else "over"
        return self.score(
            value, f"{tokens} tokens is {relation} the budget of {opts.max_tokens}",
            token_count=tokens, max_tokens=opts.max_tokens,
        )
