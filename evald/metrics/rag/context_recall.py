"""``context_recall``: the share of the expected answer's statements that the retrieved context supports."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.judged.common import JudgedOptions
from evald.metrics.judged.statements import StatementShareMetric

_TASK = (
    "Break the expected answer into its distinct statements. For each statement decide whether it can be "
    "attributed to the context blocks (stated or directly implied by them; your own knowledge does not count). "
    "In the reasoning, list each statement with 'attributed' or 'not attributed'. Then count the statements and "
    "the attributed statements."
)
_FIELDS = (
    VerdictField("total_statements", 0, None, "number of statements in the expected answer"),
    VerdictField("attributed_statements", 0, None, "number of those statements the context supports",
                 at_most="total_statements"),
)


class ContextRecallOptions(JudgedOptions):
    pass


class ContextRecallMetric(StatementShareMetric):
    """The share of the expected answer's statements that the retrieved context supports, counted by an LLM judge.

    Rubric: RAGAS' LLM context recall (as harness-evals' ``ContextRecallMetric`` implements it; seed catalog, RAG):
    the reference answer is split into statements and each is attributed, or not, to the retrieved context; recall
    = attributed / total. Reads ``expected`` (the golden's answer) and the ``content`` of each ``context``
    document. The judge returns ``{"reasoning": ..., "total_statements": t, "attributed_statements": a}``; the
    value is ``a / t`` (2 of 3: 0.667), and 1.0 when the expected answer has no statement (metadata
    ``total_statements: 0`` says so). Not applicable without ``expected`` or without a context document with
    content. A verdict with ``a > t`` is malformed: an error outcome, never a score. Option: ``judge``.
    """

    kind: ClassVar[str] = "context_recall"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("expected", "context")
    needs: ClassVar[tuple[str, ...]] = ("expected", "context")
    Options: ClassVar[type[ComponentConfig]] = ContextRecallOptions
    task: ClassVar[str] = _TASK
    text_field: ClassVar[str] = "expected"
    verdict_fields: ClassVar[tuple[VerdictField, VerdictField]] = _FIELDS
