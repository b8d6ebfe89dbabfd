"""``security_completeness``: how thoroughly the remediation covers edge cases and defence in depth (LLM judge)."""

from __future__ import annotations

from typing import ClassVar

from evald.metrics.security.remediation_judge import RemediationJudgeMetric


class SecurityCompletenessMetric(RemediationJudgeMetric):
    """An LLM judge rates, 0 to 10, how thoroughly the remediation covers the vulnerability (edge cases, depth).

    Rubric: harness-evals' ``SecurityCompletenessMetric`` (seed catalog, Security): a minimal, easily bypassed,
    single-point fix 0-3; the main case without edge cases or depth 4-6; good coverage with some defence in depth
    7-8; comprehensive (layers, edge cases, boundary conditions) 9-10. Value ``n / 10``; threshold 0.5. See
    ``remediation_judge`` for the fields, the mapping and failure semantics.
    """

    kind: ClassVar[str] = "security_completeness"
    criteria: ClassVar[str] = (
        "Evaluate how thoroughly the fix addresses the vulnerability, including edge cases and defense-in-depth. "
        "A minimal single-point fix that only handles the most obvious case is partially effective. A "
        "comprehensive fix that applies multiple layers of protection and considers boundary conditions is "
        "thorough."
    )
    steps: ClassVar[tuple[str, ...]] = (
        "Assess whether the fix handles only the primary case or also boundary and edge conditions relevant to the "
        "vulnerability type.",
        "Evaluate whether the fix uses defense-in-depth: multiple layers of protection rather than a single check.",
        "Determine whether the fix covers the whole lifecycle of the vulnerable pattern (input validation, data "
        "handling, safe output) or only one point of it.",
        "For dependency or component vulnerabilities, check whether the upgrade path is fully specified with the "
        "target version and update mechanism.",
        "Assess whether the fix could be trivially bypassed with common evasion techniques.",
    )
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = (
        (0, 3, "Minimal fix, easily bypassable, single-point only."),
        (4, 6, "Handles the main case but misses edge cases or lacks depth."),
        (7, 8, "Good coverage with some defense-in-depth."),
        (9, 10, "Comprehensive: multiple layers, edge cases handled, defense-in-depth."),
    )
