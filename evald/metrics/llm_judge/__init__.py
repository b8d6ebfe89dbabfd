"""Reference-free metrics scored by an LLM judge (``judges:``)."""

METRICS: dict[str, str] = {
    "geval": "evald.metrics.llm_judge.geval:GEvalMetric",
    "answer_correctness": "evald.metrics.llm_judge.answer_correctness:AnswerCorrectnessMetric",
    "summarization": "evald.metrics.llm_judge.summarization:SummarizationMetric",
    "rubric_judge": "evald.metrics.llm_judge.rubric_judge:RubricJudgeMetric",
    "llm_as_judge": "evald.metrics.llm_judge.llm_as_judge:LlmAsJudgeMetric",
    "prompt_alignment": "evald.metrics.llm_judge.prompt_alignment:PromptAlignmentMetric",
    "pairwise": "evald.metrics.llm_judge.pairwise:PairwiseMetric",
    "dag": "evald.metrics.llm_judge.dag:DagMetric",
}
