"""``turn_efficiency``: expected turns / actual turns of a conversation, capped at 1."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric


class TurnEfficiencyOptions(ComponentConfig):
    expected_turns: float | None = Field(
        None, gt=0, description="target number of messages; default: the case's metadata['expected_turns']"
    )


class TurnEfficiencyMetric(BaseMetric):
    """``min(expected_turns / actual_turns, 1)``: conversations longer than expected score less (deterministic).

    harness-evals' TurnEfficiency: ``actual_turns`` is the number of ``messages`` of the case (a conversation case
    has one user and one assistant message per turn), ``expected_turns`` the case's ``metadata["expected_turns"]``
    (a golden's metadata fills it) or the option, which wins. Example: 4 expected, 6 messages: 0.667; resolving
    faster than expected is capped at 1.

    Not applicable when the case has no messages or no positive numeric ``expected_turns`` (harness-evals scores
    those 0).
    """

    kind: ClassVar[str] = "turn_efficiency"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("messages", "metadata")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = TurnEfficiencyOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        expected = cast(TurnEfficiencyOptions, self.options).expected_turns
        if expected is None:
            raw = eval_case.metadata.get("expected_turns")
            if not isinstance(raw, (int, float)) or isinstance(raw, bool) or raw <= 0:
                return None
            expected = float(raw)
        actual = len(eval_case.messages)
        if actual == 0:
            return None
        value = min(expected / actual, 1.0)
        return self.score(value, f"{expected:g} expected / {actual} actual = {value:.4f}", actual_turns=actual,
                          expected_turns=expected)
