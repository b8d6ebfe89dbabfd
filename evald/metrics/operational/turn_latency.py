"""``turn_latency``: every assistant turn of a conversation answered within a per-turn latency budget."""

from __future__ import annotations

import math
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric

#: the conversation case's per-turn latencies (ms, one per kept turn; None where unknown)
TURN_LATENCIES = "turn_latency_ms"


class TurnLatencyOptions(ComponentConfig):
    max_ms_per_turn: float = Field(3000.0, gt=0, description="latency budget of one assistant turn, in ms")


class TurnLatencyMetric(BaseMetric):
    """Whether every assistant turn of a conversation answered within ``max_ms_per_turn`` (1 or 0).

    harness-evals' TurnLatency: each assistant turn with a known latency passes when latency <= the budget;
    the value is 1 only if every such turn passes (all must pass), else 0. Turns without a latency are left
    out. A ``conversation`` case carries its turns' latencies (each turn is a trace case: its ``latency_ms``) in
    ``metadata["turn_latency_ms"]``; a ``trace`` or ``llm_call`` case is one turn, its own ``latency_ms``.
    Metadata: ``turn_latencies``, ``mean_latency_ms``, ``n_turns_scored``, ``n_turns_failed``.

    Not applicable when no turn has a latency (harness-evals scores that 0).
    """

    kind: ClassVar[str] = "turn_latency"
    family: ClassVar[str] = "operational"
    dimension: ClassVar[Dimension] = Dimension.PERFORMANCE
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("metadata", "latency_ms")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = TurnLatencyOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        budget = cast(TurnLatencyOptions, self.options).max_ms_per_turn
        latencies = turn_values(eval_case, TURN_LATENCIES, eval_case.latency_ms)
        if not latencies:
            return None
        failed = sum(1 for lat in latencies if lat > budget)
        mean = sum(latencies) / len(latencies)
        return self.score(
            0.0 if failed else 1.0,
            f"{len(latencies) - failed}/{len(latencies)} turns within {budget:g} ms (mean {mean:.0f} ms)",
            turn_latencies=latencies, mean_latency_ms=mean, max_ms_per_turn=budget,
            n_turns_scored=len(latencies), n_turns_failed=failed,
        )


def turn_values(eval_case: EvalCase, key: str, own: float | None) -> list[float]:
    """The finite, non-negative per-turn values: ``metadata[key]`` for a conversation, else the case's own."""
    raw = eval_case.metadata.get(key) if eval_case.scope == "conversation" else [own]
    if not isinstance(raw, (list, tuple)):
        return []
    out = []
    for value in raw:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
            out.append(float(value))
    return out
