"""``topic_adherence``: whether the assistant answers on its allowed topics and declines the others."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions, numbered


class TopicAdherenceOptions(JudgedOptions):
    topics: list[str] = Field(
        ..., min_length=1, max_length=50, description="The topics the assistant may talk about (e.g. 'billing').",
    )


class TopicAdherenceMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how well the assistant keeps to its allowed topics across the conversation.

    Rubric: RAGAS' TopicAdherenceScore as harness-evals states it (seed catalog, Conversation: "topic adherence"):
    answering an on-topic question is good (true positive), declining an off-topic one is good (true negative),
    answering an off-topic question is bad (false positive), declining an on-topic one is bad (false negative).
    Reads ``messages`` (one line per turn); the allowed topics come from option ``topics`` (trusted, in the task).
    Band mapping: ``{"score": n}`` from 1 (complete failure) to 5 (perfect adherence); the value is
    ``(n - 1) / 4``. Not applicable with fewer than 2 messages. ``Score.reason`` is the judge's reasoning;
    metadata ``judge_score``, ``judge``. Options: ``topics`` (required), ``judge``. A judge that gives no valid
    verdict is an error outcome, never a score.
    """

    kind: ClassVar[str] = "topic_adherence"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = TopicAdherenceOptions
    sent_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "how well the assistant keeps to the allowed topics (5 = perfectly)"

    def setup(self) -> None:
        topics = cast(TopicAdherenceOptions, self.options).topics
        self._task = (
            "Rate how well the assistant keeps to its allowed topics across the conversation. For each user "
            "question decide whether it is on one of the allowed topics. Answering an on-topic question is good; "
            "declining an off-topic question is good; answering an off-topic question is bad; declining an "
            "on-topic question is bad.\n5 = perfect adherence; 4 = one minor slip; 3 = some off-topic answers or "
            "wrong refusals; 2 = frequent; 1 = no adherence at all.\nAllowed topics:\n" + numbered(topics)
        )

    def judge_task(self, eval_case: EvalCase) -> str:
        return self._task
