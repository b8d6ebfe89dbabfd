"""``root_cause_analysis``: whether the output identifies the vulnerability's root cause precisely (LLM judge)."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.metrics.security.remediation_judge import RemediationJudgeMetric


class RootCauseAnalysisMetric(RemediationJudgeMetric):
    """An LLM judge rates, 0 to 10, how accurately and precisely the output identifies the vulnerability's root cause.

    Rubric: harness-evals' ``RootCauseAnalysisMetric`` (seed catalog, Security; a groundedness metric there and
    here): the root cause wrong or not identified 0-3; partly correct but vague 4-6; correct with reasonable
    specificity 7-8; precise (the taint path, line references, the exact configuration field or component
    version) 9-10. Value ``n / 10``; threshold 0.5. See ``remediation_judge`` for the fields, the mapping and
    failure semantics.
    """

    kind: ClassVar[str] = "root_cause_analysis"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    criteria: ClassVar[str] = (
        "Evaluate whether the output accurately identifies the root cause of the vulnerability. The analysis "
        "should trace the origin of the issue (a code-level data flow problem, a vulnerable dependency, an "
        "exposed secret, or a misconfigured resource) with specificity and precision."
    )
    steps: ClassVar[tuple[str, ...]] = (
        "Identify the vulnerability type from the input.",
        "Assess whether the output traces the vulnerability to its specific source: a data flow path, a "
        "vulnerable component and version, an exposure mechanism, or a misconfigured resource and field.",
        "Evaluate precision: specific code locations, configuration fields, component versions or data flow "
        "paths, or vague and generic?",
        "Check that the identified root cause is consistent with the vulnerability type in the input.",
        "For findings outside the standard categories (business logic, API misuse, access control), assess whether "
        "the specific mechanism that creates the exposure is identified.",
    )
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = (
        (0, 3, "Root cause is wrong or not identified."),
        (4, 6, "Root cause is partially correct but vague or missing specifics."),
        (7, 8, "Root cause is correct with reasonable specificity."),
        (9, 10, "Root cause is precise: correct taint path, line refs, or exact config field."),
    )
