"""``code_quality``: the syntactic and stylistic quality of the remediation's code (LLM judge)."""

from __future__ import annotations

from typing import ClassVar

from evald.metrics.security.remediation_judge import RemediationJudgeMetric


class CodeQualityMetric(RemediationJudgeMetric):
    """An LLM judge rates, 0 to 10, the quality of the remediation's code: language, syntax, idiom, real imports.

    Rubric: harness-evals' ``CodeQualityMetric`` (seed catalog, Security): the wrong language or broken syntax
    0-2; the right language with syntax issues or non-idiomatic code 3-5; clean compilable code with minor style
    issues 6-8; production quality 9-10; hallucinated dependencies and fragments that need guessing lower it.
    Value ``n / 10``; threshold 0.5. See ``remediation_judge`` for the fields, the mapping and failure semantics.
    """

    kind: ClassVar[str] = "code_quality"
    criteria: ClassVar[str] = (
        "Evaluate the syntactic and stylistic quality of the generated code fix. Is it in the correct programming "
        "language for the file? Is it syntactically correct? Does it follow language idioms and best practices? "
        "Are any referenced dependencies real (not hallucinated)?"
    )
    steps: ClassVar[tuple[str, ...]] = (
        "Determine the expected programming language from the file name and context in the input.",
        "Check that the fix is written in that language; the wrong language entirely is a fundamental failure.",
        "Check for obvious syntax errors that would prevent compilation or interpretation.",
        "Assess completeness: a complete, insertable unit (function, block, file), or a fragment that leaves the "
        "developer to guess the surrounding code?",
        "Evaluate whether the code follows the idioms and conventions of the language.",
        "Check that imported libraries and dependencies actually exist.",
    )
    rubric: ClassVar[tuple[tuple[int, int, str], ...]] = (
        (0, 2, "Wrong programming language or completely broken syntax."),
        (3, 5, "Correct language but has syntax issues or non-idiomatic patterns."),
        (6, 8, "Clean, compilable code with minor style issues."),
        (9, 10, "Production-quality code: correct language, idiomatic, clean."),
    )
