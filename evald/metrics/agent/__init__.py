"""Agent (trajectory dimension) metrics: the tools an agent called, their order and their arguments."""

METRICS: dict[str, str] = {
    "tool_correctness": "evald.metrics.agent.tool_correctness:ToolCorrectnessMetric",
    "tool_argument_match": "evald.metrics.agent.tool_argument_match:ToolArgumentMatchMetric",
    "args_valid": "evald.metrics.agent.args_valid:ArgsValidMetric",
    "sequence_valid": "evald.metrics.agent.sequence_valid:SequenceValidMetric",
    "tool_blocklist": "evald.metrics.agent.tool_blocklist:ToolBlocklistMetric",
    "step_efficiency": "evald.metrics.agent.step_efficiency:StepEfficiencyMetric",
    "tool_called": "evald.metrics.agent.tool_called:ToolCalledMetric",
    "tool_not_called": "evald.metrics.agent.tool_not_called:ToolNotCalledMetric",
    "tool_called_with": "evald.metrics.agent.tool_called_with:ToolCalledWithMetric",
    "tool_call_order": "evald.metrics.agent.tool_call_order:ToolCallOrderMetric",
    "steps_below": "evald.metrics.agent.steps_below:StepsBelowMetric",
    "task_completion": "evald.metrics.agent.task_completion:TaskCompletionMetric",
    "tool_use_quality": "evald.metrics.agent.tool_use_quality:ToolUseQualityMetric",
    "argument_correctness": "evald.metrics.agent.argument_correctness:ArgumentCorrectnessMetric",
    "plan_quality": "evald.metrics.agent.plan_quality:PlanQualityMetric",
    "plan_adherence": "evald.metrics.agent.plan_adherence:PlanAdherenceMetric",
}
