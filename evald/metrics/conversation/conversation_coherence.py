"""``conversation_coherence``: an LLM judge rates how coherent the assistant is across a conversation."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class ConversationCoherenceOptions(JudgedOptions):
    pass


class ConversationCoherenceMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how coherent the assistant's turns are across the conversation.

    Reads ``messages`` rendered one line per turn (``[i] role: content``, content truncated to 500
    characters). Band mapping: ``{"score": n}``
    from 1 (incoherent) to 5 (fully coherent);
    the value is ``(n - 1) / 4`` (a 4 scores 0.75). Not applicable with fewer than 2 messages.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout, budget) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "conversation_coherence"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = ConversationCoherenceOptions
    task: ClassVar[str] = (
        "Rate the coherence of the assistant across the conversation: each assistant turn follows from what "
        "was said before, stays consistent with its earlier turns, and does not contradict itself or lose the "
        "thread.\n5 = fully coherent; 4 = a minor lapse; 3 = some incoherent turns; 2 = often inconsistent; 1 "
        "= incoherent."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "coherence of the assistant across turns (5 = fully coherent)"
