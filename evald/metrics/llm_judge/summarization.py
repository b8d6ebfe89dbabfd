"""``summarization``: an LLM judge rates the output as a summary of the input."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class SummarizationOptions(JudgedOptions):
    pass


class SummarizationMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, the output as a summary of the input (coverage, accuracy, concision).

    Reads ``input`` (the source text) and ``output`` (the summary). Band mapping: ``{"score": n}`` from 1
    (not a summary of the input) to 5 (accurate, complete and concise); the value is ``(n - 1) / 4`` (a 5 scores
    1.0). Not applicable without an input or without an output.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "summarization"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = SummarizationOptions
    task: ClassVar[str] = (
        "The input is a source text and the output is meant to be its summary. Rate the summary: it covers "
        "the key points, states nothing the source does not, and is much shorter than the source.\n5 = "
        "accurate, complete and concise; 4 = good with a minor omission; 3 = misses key points or is verbose; "
        "2 = inaccurate or mostly missing; 1 = not a summary of the input."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    score_meaning: ClassVar[str] = "quality of the output as a summary of the input (5 = best)"
