"""Security remediation metrics (harness-evals' security family) and the Remediation Quality Index composite.

``code_safety`` is deterministic here (static patterns); the LLM-judged members of the family are registered
beside it as they are added.
"""

METRICS: dict[str, str] = {
    "code_safety": "evald.metrics.security.code_safety:CodeSafetyMetric",
}
