"""``context_relevancy``: an LLM judge rates how relevant the retrieved context is to the input."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class ContextRelevancyOptions(JudgedOptions):
    pass


class ContextRelevancyMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how relevant the retrieved context is to the input.

    Reads ``input`` and the ``content`` of each ``context`` document. Band mapping: ``{"score": n}`` with n
    from 1 (nothing relevant) to 5 (all relevant and sufficient); the value is ``(n - 1) / 4`` (a 2 scores 0.25).
    Not applicable without an input or without a context document that has content.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "context_relevancy"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "context")
    needs: ClassVar[tuple[str, ...]] = ("input", "context")
    Options: ClassVar[type[ComponentConfig]] = ContextRelevancyOptions
    task: ClassVar[str] = (
        "Rate how relevant the retrieved context blocks are to the input: do they contain the information "
        "needed to answer it, without much unrelated material? The output is not judged.\n5 = all blocks are "
        "relevant and sufficient; 4 = relevant with some noise; 3 = partly relevant; 2 = mostly irrelevant; 1 "
        "= nothing relevant to the input."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "context")
    needed_fields: ClassVar[tuple[str, ...]] = ("input", "context")
    score_meaning: ClassVar[str] = "relevance of the context to the input (5 = all relevant)"
