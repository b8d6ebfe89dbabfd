"""``actionability``: how easily a developer can apply the remediation as given (LLM judge)."""

from __future__ import annotations

from typing import ClassVar

from evald.metrics.security.remediation_judge import RemediationJudgeMetric


class ActionabilityMetric(RemediationJudgeMetric):
    """An LLM judge rates, 0 to 10, how ready to apply the remediation is: complete code, commands, file references.

    Rubric: harness-evals' ``ActionabilityMetric`` (seed catalog, Security): truncated, incomplete or needing
    major work 0-3; usable but missing commands, file references or some assembly 4-6; nearly copy-paste ready
    7-8; fully actionable (complete code, commands, file references) 9-10. Value ``n / 10``; threshold 0.5. See
    ``remediation_judge`` for the fields, the mapping and failure semantics.
    """

    kind: ClassVar[str] = "actionability"
    criteria: ClassVar[str] = (
        "Evaluate how easily a developer can apply this fix. Can they copy-paste the code and have it work? Are "
        "the necessary commands or version changes included for dependency upgrades? Are file paths and line "
        "numbers referenced? Is the output complete (not truncated)?"
    )
    steps: ClassVar[tuple[str, ...]] = (
        "Check that the code fix is complete and ready to use, not truncated mid-line.",
        "For dependency or component vulnerabilities, check that the commands, version identifiers or "
        "configuration changes are given for the relevant technology stack.",
        "Check that file paths or line numbers say where to apply the fix.",
        "Assess whether the fix says what was changed and why, so it is not a blind patch.",
        "Evaluate whether the developer would need significant additional research or work to apply it.",
    )
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = (
        (0, 3, "Truncated, incomplete, or requires major additional work."),
        (4, 6, "Usable but missing commands, file refs, or some assembly required."),
        (7, 8, "Nearly copy-paste ready with minor gaps."),
        (9, 10, "Fully actionable: complete code, commands, file refs, ready to apply."),
    )
