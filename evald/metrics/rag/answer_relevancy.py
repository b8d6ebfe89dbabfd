"""``answer_relevancy``: an LLM judge rates how directly the output answers the input."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions

_TASK = (
    "Rate how relevant the output is to the input: does it address what was asked, without going off topic or "
    "padding with unrelated content? Correctness is not judged here, only relevance.\n"
    "5 = fully addresses the input; 4 = addresses it with minor digressions; 3 = partly addresses it; "
    "2 = mostly off topic; 1 = does not address the input at all."
)


class AnswerRelevancyOptions(JudgedOptions):
    pass


class AnswerRelevancyMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how directly the output addresses the input.

    Reads ``input`` and ``output`` (redacted, delimited as untrusted data) and asks the judge named by option
    ``judge`` for ``{"reasoning": ..., "score": n}`` with ``n`` from 1 (does not address the input) to 5 (fully
    addresses it). The value is ``(n - 1) / 4``: a 4 scores 0.75. ``Score.reason`` is the judge's reasoning.
    Not applicable when the input or the output is missing or empty. A judge that gives no valid verdict is an
    error outcome, never a score.
    """

    kind: ClassVar[str] = "answer_relevancy"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = AnswerRelevancyOptions
    task: ClassVar[str] = _TASK
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    score_meaning: ClassVar[str] = "relevance of the output to the input"
