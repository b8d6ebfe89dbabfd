"""``explanation_quality``: how specific, correct and actionable the remediation's explanation is (LLM judge)."""

from __future__ import annotations

from typing import ClassVar

from evald.metrics.security.remediation_judge import RemediationJudgeMetric


class ExplanationQualityMetric(RemediationJudgeMetric):
    """An LLM judge rates, 0 to 10, the remediation's explanation: specific, correct references, actionable steps.

    Rubric: harness-evals' ``ExplanationQualityMetric`` (seed catalog, Security): generic textbook advice, a wrong
    CWE or filler steps 0-3; somewhat specific but missing references or an attack scenario 4-6; specific with
    the correct CWE and actionable steps 7-8; code-specific with the correct CWE, an attack scenario and a
    verification checklist 9-10. Value ``n / 10``; threshold 0.5. See ``remediation_judge`` for the fields, the
    mapping and failure semantics.
    """

    kind: ClassVar[str] = "explanation_quality"
    criteria: ClassVar[str] = (
        "Evaluate the quality of the remediation's explanation text. Is it accurate and specific to this "
        "vulnerability (not generic textbook advice)? Does it reference the correct security standards? Are the "
        "remediation steps actionable? An attack scenario, references and verification guidance add value."
    )
    steps: ClassVar[tuple[str, ...]] = (
        "Check whether the explanation is specific to the actual vulnerability in the code, or generic advice that "
        "could apply to any vulnerability.",
        "Assess whether the remediation steps are substantive and tied to the reported issue.",
        "Check whether security standard references (CWE, CVE, OWASP, CIS benchmarks, NVD advisories) are present "
        "and correct for the vulnerability type.",
        "Evaluate whether a developer can follow the steps without further research.",
        "Note whether an attack scenario is present: it adds value, but its absence alone should not heavily "
        "penalise an otherwise specific and accurate explanation.",
    )
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = (
        (0, 3, "Generic textbook advice, wrong CWE, or filler steps."),
        (4, 6, "Somewhat specific but missing references or attack scenario."),
        (7, 8, "Specific with correct CWE, actionable steps, minor gaps."),
        (9, 10, "Code-specific, correct CWE, attack scenario, verification checklist."),
    )
