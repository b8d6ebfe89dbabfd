"""Governed LLM judges: config, one limiter per judge, redaction, strict verdict parsing (docs/judges.md)."""
