"""``faithfulness``: the share of the output's claims that the retrieved context supports, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.judged.common import JudgedOptions
from evald.metrics.judged.statements import StatementShareMetric

_TASK = (
    "Break the output into its distinct factual claims. For each claim decide whether the context blocks "
    "support it (stated or directly implied by them; your own knowledge does not count). In the reasoning, list "
    "each claim with 'supported' or 'not supported'. Then count the claims and the supported claims."
)
_FIELDS = (
    VerdictField("total_claims", 0, None, "number of factual claims in the output"),
    VerdictField("supported_claims", 0, None, "number of those claims the context supports", at_most="total_claims"),
)


class FaithfulnessOptions(JudgedOptions):
    pass


class FaithfulnessMetric(StatementShareMetric):
    """The share of the output's factual claims that the retrieved context supports, counted by an LLM judge.

    Reads ``output`` and the ``content`` of each ``context`` document (redacted, delimited as untrusted data).
    The judge named by option ``judge`` lists the output's claims in its reasoning and returns
    ``{"reasoning": ..., "total_claims": t, "supported_claims": s}``; the value is ``s / t`` (3 of 4 claims
    supported: 0.75), and 1.0 when the output makes no factual claim (nothing unsupported; metadata
    ``total_claims: 0`` says so). ``Score.reason`` is the judge's reasoning. Not applicable without an output or
    without any context document that has content. A verdict with ``s > t`` is malformed: an error outcome.
    """

    kind: ClassVar[str] = "faithfulness"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output", "context")
    needs: ClassVar[tuple[str, ...]] = ("output", "context")
    Options: ClassVar[type[ComponentConfig]] = FaithfulnessOptions
    task: ClassVar[str] = _TASK
    text_field: ClassVar[str] = "output"
    verdict_fields: ClassVar[tuple[VerdictField, VerdictField]] = _FIELDS
