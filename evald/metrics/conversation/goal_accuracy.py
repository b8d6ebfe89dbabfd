"""``goal_accuracy``: an LLM judge rates whether a conversation achieved the user's goal."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class GoalAccuracyOptions(JudgedOptions):
    pass


class GoalAccuracyMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, whether the conversation achieved the user's goal correctly.

    Reads ``messages`` rendered one line per turn (``[i] role: content``, content truncated to 500
    characters). Band mapping: ``{"score": n}``
    from 1 (goal not achieved or wrong) to 5 (goal fully and correctly achieved);
    the value is ``(n - 1) / 4`` (a 4 scores 0.75). Not applicable with fewer than 2 messages.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout, budget) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "goal_accuracy"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = GoalAccuracyOptions
    task: ClassVar[str] = (
        "Identify the user's goal from the conversation, then rate whether the assistant achieved it "
        "correctly by the end (the right result, not just a confident claim).\n5 = goal fully and correctly "
        "achieved; 4 = achieved with a minor flaw; 3 = partly achieved; 2 = not achieved but progress made; 1 "
        "= not achieved or wrong."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "how correctly the user's goal was achieved (5 = fully)"
