"""``turn_token_cost``: the mean per-turn token usage of a conversation against a per-turn budget."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.operational.turn_latency import turn_values

#: the conversation case's per-turn token counts (one per kept turn; None where unknown)
TURN_TOKENS = "turn_tokens"


class TurnTokenCostOptions(ComponentConfig):
    max_tokens_per_turn: int = Field(2000, gt=0, description="token budget of one assistant turn")


class TurnTokenCostMetric(BaseMetric):
    """Mean over assistant turns of ``max(0, 1 - tokens / max_tokens_per_turn)`` (per-turn conversation cost).

    harness-evals' TurnTokenCost. A turn's tokens are its trace's ``token_count`` (else input + output tokens);
    a ``conversation`` case carries them in ``metadata["turn_tokens"]``, a trace or call case is one turn. Turns
    without a count are left out. Example: turns of 500 and 1500 tokens with the default 2000 budget:
    (0.75 + 0.25) / 2 = 0.5. Metadata: ``turn_token_counts``, ``mean_token_count``, ``n_turns_scored``.

    Not applicable when no turn has a token count (harness-evals scores that 0).
    """

    kind: ClassVar[str] = "turn_token_cost"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("metadata", "token_count", "input_tokens", "output_tokens")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = TurnTokenCostOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        budget = cast(TurnTokenCostOptions, self.options).max_tokens_per_turn
        own: float | None = eval_case.token_count
        if own is None and eval_case.input_tokens is not None and eval_case.output_tokens is not None:
            own = eval_case.input_tokens + eval_case.output_tokens
        counts = turn_values(eval_case, TURN_TOKENS, own)
        if not counts:
            return None
        values = [max(0.0, 1.0 - count / budget) for count in counts]
        mean_tokens = sum(counts) / len(counts)
        return self.score(
            sum(values) / len(values),
            f"mean {mean_tokens:g} tokens over {len(counts)} turns against {budget} per turn",
            turn_token_counts=counts, mean_token_count=mean_tokens, max_tokens_per_turn=budget,
            n_turns_scored=len(counts),
        )
