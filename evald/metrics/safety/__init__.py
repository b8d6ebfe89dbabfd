"""Safety metrics (PII and secret leaks, prompt injection, refusals): reported apart, never averaged with others."""

METRICS: dict[str, str] = {
    "pii_leak": "evald.metrics.safety.pii_leak:PiiLeakMetric",
    "secret_leak": "evald.metrics.safety.secret_leak:SecretLeakMetric",
    "prompt_injection": "evald.metrics.safety.prompt_injection:PromptInjectionMetric",
    "refusal": "evald.metrics.safety.refusal:RefusalMetric",
    "toxicity": "evald.metrics.safety.toxicity:ToxicityMetric",
    "bias": "evald.metrics.safety.bias:BiasMetric",
    "harmful_advice": "evald.metrics.safety.harmful_advice:HarmfulAdviceMetric",
    "refusal_quality": "evald.metrics.safety.refusal_quality:RefusalQualityMetric",
    "compliance": "evald.metrics.safety.compliance:ComplianceMetric",
    "harm_severity": "evald.metrics.safety.harm_severity:HarmSeverityMetric",
    "misuse_detection": "evald.metrics.safety.misuse_detection:MisuseDetectionMetric",
    "role_violation": "evald.metrics.safety.role_violation:RoleViolationMetric",
}
