"""Security remediation metrics (harness-evals' security family) and the Remediation Quality Index composite.

``code_safety`` is deterministic here (static patterns); the LLM-judged members of the family are registered
beside it as they are added.
"""

METRICS: dict[str, str] = {
    "code_safety": "evald.metrics.security.code_safety:CodeSafetyMetric",
    "vulnerability_correctness": "evald.metrics.security.vulnerability_correctness:VulnerabilityCorrectnessMetric",
    "security_completeness": "evald.metrics.security.security_completeness:SecurityCompletenessMetric",
    "code_quality": "evald.metrics.security.code_quality:CodeQualityMetric",
    "explanation_quality": "evald.metrics.security.explanation_quality:ExplanationQualityMetric",
    "root_cause_analysis": "evald.metrics.security.root_cause_analysis:RootCauseAnalysisMetric",
    "actionability": "evald.metrics.security.actionability:ActionabilityMetric",
}
