"""``knowledge_retention``: an LLM judge rates how well the assistant retains what the user said earlier."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class KnowledgeRetentionOptions(JudgedOptions):
    pass


class KnowledgeRetentionMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how well the assistant remembers what the user said in earlier turns.

    Reads ``messages`` rendered one line per turn (``[i] role: content``, content truncated to 500
    characters). Band mapping: ``{"score": n}``
    from 1 (ignores what the user said) to 5 (retains everything);
    the value is ``(n - 1) / 4`` (a 4 scores 0.75). Not applicable with fewer than 2 messages.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout, budget) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "knowledge_retention"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = KnowledgeRetentionOptions
    task: ClassVar[str] = (
        "Rate the assistant's knowledge retention: it remembers and uses facts the user gave in earlier turns "
        "(names, preferences, constraints, answers), and never asks again for them or contradicts them.\n5 = "
        "retains everything; 4 = one minor lapse; 3 = forgets some facts; 2 = often forgets or re-asks; 1 = "
        "ignores what the user said."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "how well earlier user facts are retained (5 = all)"
