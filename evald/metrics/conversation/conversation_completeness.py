"""``conversation_completeness``: whether the assistant addressed every user intent of a conversation."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class ConversationCompletenessOptions(JudgedOptions):
    pass


class ConversationCompletenessMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how fully the assistant addressed every user intent across the conversation.

    Rubric: DeepEval's ConversationCompletenessMetric as harness-evals implements it (seed catalog, Conversation:
    "completeness"): identify every distinct user intent or request across the conversation, decide for each
    whether the assistant fully addressed it (questions left unanswered or half-answered, needs not followed up
    lower the score); when the case has an ``expected`` outcome (a golden's answer) it is shown as the intended
    end state. Reads ``messages`` (one line per turn) and ``expected`` (if any). Band mapping: ``{"score": n}``
    from 1 (no intent addressed) to 5 (every intent fully addressed); the value is ``(n - 1) / 4``. Not applicable
    with fewer than 2 messages. ``Score.reason`` is the judge's reasoning; metadata ``judge_score``, ``judge``.
    Option: ``judge``. A judge that gives no valid verdict is an error outcome, never a score.
    """

    kind: ClassVar[str] = "conversation_completeness"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("messages", "expected")
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = ConversationCompletenessOptions
    task: ClassVar[str] = (
        "Identify every distinct user intent or request across the conversation, and decide for each whether the "
        "assistant fully addressed it: questions left unanswered or only partly answered, and user needs not "
        "acknowledged or followed up, lower the score. If an expected block is given, it is the intended outcome "
        "of the conversation.\n5 = every intent fully addressed; 4 = one minor gap; 3 = some intents only partly "
        "addressed; 2 = most intents unaddressed; 1 = none addressed."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("conversation", "expected")
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "how fully the user's intents were addressed (5 = all of them)"
