"""Reliability metrics over repeated runs (Rabanser et al., "Towards a Science of AI Agent Reliability"):
consistency and robustness of groups of K runs, and the Brier score over a sliding window. Scored online by the
windowed stage (evald/windowed/), not per case.
"""

METRICS: dict[str, str] = {
    "outcome_consistency": "evald.metrics.reliability.outcome_consistency:OutcomeConsistencyMetric",
    "resource_consistency": "evald.metrics.reliability.resource_consistency:ResourceConsistencyMetric",
    "trajectory_consistency": "evald.metrics.reliability.trajectory_consistency:TrajectoryConsistencyMetric",
    "prompt_robustness": "evald.metrics.reliability.prompt_robustness:PromptRobustnessMetric",
    "environment_robustness": "evald.metrics.reliability.environment_robustness:EnvironmentRobustnessMetric",
    "fault_robustness": "evald.metrics.reliability.fault_robustness:FaultRobustnessMetric",
    "brier_score": "evald.metrics.reliability.brier_score:BrierScoreMetric",
}
