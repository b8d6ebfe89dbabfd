"""evald: an OpenTelemetry collector-side evaluation daemon for LLM and agent traces."""

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall

__version__ = "0.1.0"

__all__ = ["Dimension", "Document", "EvalCase", "Message", "Score", "ToolCall", "__version__"]
