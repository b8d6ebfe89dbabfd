"""Reference-free metrics scored by an LLM judge (``judges:``)."""

METRICS: dict[str, str] = {
    "geval": "evald.metrics.llm_judge.geval:GEvalMetric",
}
