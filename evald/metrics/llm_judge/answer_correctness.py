"""``answer_correctness``: an LLM judge compares the output with the expected (golden) answer."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class AnswerCorrectnessOptions(JudgedOptions):
    pass


class AnswerCorrectnessMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how well the output agrees with the expected (golden) answer.

    Reads ``input`` (if any), ``expected`` and ``output``. Band mapping: ``{"score": n}`` with n from 1 (wrong or
    contradicts the expected answer) to 5 (equivalent); the value is ``(n - 1) / 4`` (a 3 scores 0.5).
    Not applicable without an expected answer or without an output.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "answer_correctness"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("input", "output", "expected")
    Options: ClassVar[type[ComponentConfig]] = AnswerCorrectnessOptions
    task: ClassVar[str] = (
        "Compare the output with the expected answer (the golden reference) for the input. Judge factual "
        "agreement and completeness: the facts of the expected answer that the output states, misses or "
        "contradicts. Wording and style do not matter.\n5 = equivalent to the expected answer; 4 = correct "
        "with a minor omission; 3 = partly correct; 2 = mostly wrong or missing the key fact; 1 = wrong or "
        "contradicts the expected answer."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "expected", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("expected", "output")
    score_meaning: ClassVar[str] = "agreement of the output with the expected answer (5 = equivalent)"
