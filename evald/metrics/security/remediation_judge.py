"""``RemediationJudgeMetric``: the shared body of the LLM-judged security remediation metrics (not registered).

harness-evals' security family (seed catalog, Security: "LLM-as-Judge metrics for AI-generated security
vulnerability remediations") states each metric as G-Eval criteria, numbered evaluation steps and a 0-10 rubric
of score bands. A subclass declares those three (``criteria``, ``steps``, ``rubric``: (low, high, description)
bands covering 0..10); the judge reads the finding (``input``: the vulnerability report, CWE/CVE, file) and the
remediation (``output``), follows the steps and returns ``{"reasoning": ..., "score": n}`` with n in 0..10; the
value is ``n / 10`` (a 7 is 0.7). Not applicable without an output. A score outside 0..10 or a verdict that is not
the JSON object is malformed: an error outcome, never a score. Option: ``judge``.
"""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions, numbered


class RemediationJudgeOptions(JudgedOptions):
    pass


class RemediationJudgeMetric(BandedJudgeMetric):
    """Base of the judged security remediation metrics: criteria + steps + a 0-10 rubric; not registered itself."""

    family: ClassVar[str] = "security"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output")
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = RemediationJudgeOptions
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("output",)
    lowest: ClassVar[int] = 0
    highest: ClassVar[int] = 10
    criteria: ClassVar[str] = ""
    steps: ClassVar[tuple[str, ...]] = ()
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.criteria:
            bands = "\n".join(f"{low}-{high}: {text}" for low, high, text in cls.rubric)
            cls.task = (
                "The input describes a security finding (vulnerability, CWE/CVE, file); the output is an "
                f"AI-generated remediation of it. {cls.criteria}\nEvaluation steps:\n{numbered(cls.steps)}\n"
                f"Score bands:\n{bands}"
            )
            cls.score_meaning = f"the {cls.kind.replace('_', ' ')} score (0 to 10, per the score bands)"
