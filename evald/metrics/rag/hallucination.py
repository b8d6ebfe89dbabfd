"""``hallucination``: an LLM judge rates how free the output is of statements the context does not back."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class HallucinationOptions(JudgedOptions):
    pass


class HallucinationMetric(BandedJudgeMetric):
    """An LLM judge rates, 1 to 5, how free the output is of statements the context contradicts or lacks.

    Reads ``input``, the ``content`` of each ``context`` document and ``output``. Band mapping: ``{"score": n}``
    with n from 1 (mostly contradicted or absent from the context) to 5 (no hallucinated statement); the value is
    ``(n - 1) / 4``, so 1.0 means no hallucination (a 4 scores 0.75 and passes the 0.75 threshold).
    Not applicable without an output or without a context document that has content.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "hallucination"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.75
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "context")
    needs: ClassVar[tuple[str, ...]] = ("output", "context")
    Options: ClassVar[type[ComponentConfig]] = HallucinationOptions
    task: ClassVar[str] = (
        "Check every statement of the output against the context blocks only (your own knowledge does not "
        "count). A statement is hallucinated when the context contradicts it or does not contain it. In the "
        "reasoning, list the hallucinated statements and say for each whether it is contradicted or "
        "absent.\n5 = no hallucinated statement; 4 = one minor unsupported detail; 3 = some unsupported "
        "statements, none contradicted; 2 = an important statement is unsupported or one is contradicted; 1 = "
        "mostly unsupported or contradicted."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "context", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("context", "output")
    score_meaning: ClassVar[str] = "how free the output is of hallucinated statements (5 = none)"
