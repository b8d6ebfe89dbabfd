"""Langfuse's own span attributes (Python SDK v3+, JS SDK v4, and emitters that follow its property mapping)
rewritten as OpenTelemetry GenAI attributes, so that :class:`~evald.mapping.genai_semconv.GenAISemconvMapper`
reads a Langfuse trace like any other GenAI trace.

Reads (sources in docs/conventions-vendors.md): ``langfuse.observation.type`` (``generation`` / ``embedding`` ->
inference / embeddings; ``agent`` -> ``invoke_agent``; ``tool`` -> ``execute_tool``; ``retriever`` ->
``retrieval``; ``span`` / ``chain`` -> a workflow span whose input/output may hold the question and answer;
``event`` / ``evaluator`` / ``guardrail`` -> nothing), ``langfuse.observation.input`` / ``output`` (JSON strings of
whatever the application passed: message lists, ``{"args": [...], "kwargs": {...}}`` of ``@observe``, plain
text), ``langfuse.observation.model.name``, ``langfuse.observation.usage_details`` (``input`` / ``output`` or the
provider's ``prompt_tokens`` / ``completion_tokens`` / ``input_tokens`` / ``output_tokens``),
``langfuse.observation.level`` (``ERROR``) and ``status_message``, ``langfuse.trace.input`` / ``output`` /
``name``, ``langfuse.session.id`` / ``session.id`` (conversation id). Attributes already present on the span win.
Pure; garbage gives fewer attributes, never an exception (callers also guard).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evald import semconv as sc
from evald.case import Message
from evald.mapping.messages import parse_messages, text_of
from evald.mapping.openllmetry_entities import answer_of, decode, question_of, tool_io
from evald.mapping.values import as_count, as_dict, as_str, is_mapping
from evald.model import SpanRecord

OBSERVATION_TYPE: Final = "langfuse.observation.type"
OBSERVATION_INPUT: Final = "langfuse.observation.input"
OBSERVATION_OUTPUT: Final = "langfuse.observation.output"
OBSERVATION_MODEL: Final = "langfuse.observation.model.name"
OBSERVATION_USAGE: Final = "langfuse.observation.usage_details"
OBSERVATION_LEVEL: Final = "langfuse.observation.level"
OBSERVATION_STATUS: Final = "langfuse.observation.status_message"
TRACE_NAME: Final = "langfuse.trace.name"
TRACE_INPUT: Final = "langfuse.trace.input"
TRACE_OUTPUT: Final = "langfuse.trace.output"
SESSION_ID: Final = "langfuse.session.id"
KEYS: Final[frozenset[str]] = frozenset({OBSERVATION_TYPE, TRACE_INPUT, TRACE_OUTPUT})

_OPERATIONS: Final = {
    "generation": sc.OP_CHAT, "embedding": sc.OP_EMBEDDINGS, "agent": sc.OP_INVOKE_AGENT,
    "tool": sc.OP_EXECUTE_TOOL, "retriever": sc.OP_RETRIEVAL, "span": sc.OP_INVOKE_WORKFLOW,
    "chain": sc.OP_INVOKE_WORKFLOW,
}
_INPUT_USAGE: Final = ("input", "prompt_tokens", "input_tokens", "promptTokens", "inputTokens", "prompt")
_OUTPUT_USAGE: Final = ("output", "completion_tokens", "output_tokens", "completionTokens", "outputTokens",
                        "completion")
_DOC_LISTS: Final = ("documents", "docs", "results", "context", "output")
_USER: Final = frozenset({"user"})
_OUTPUT_ROLES: Final = frozenset({"assistant", "model"})


def operation(attrs: Mapping[str, Any]) -> str | None:
    """The GenAI operation a Langfuse observation stands for (no content is parsed)."""
    kind = attrs.get(OBSERVATION_TYPE)
    if isinstance(kind, str):
        return _OPERATIONS.get(kind.strip().lower())
    return sc.OP_INVOKE_WORKFLOW if TRACE_INPUT in attrs or TRACE_OUTPUT in attrs else None


def semconv_attributes(span: SpanRecord) -> dict[str, Any]:
    """GenAI attributes equivalent to the span's Langfuse attributes (only keys the span does not carry)."""
    attrs = span.attributes
    op = operation(attrs)
    out: dict[str, Any] = {}
    if op is None:
        return out
    if sc.OPERATION_NAME not in attrs:
        out[sc.OPERATION_NAME] = op
    raw_in = attrs.get(OBSERVATION_INPUT)
    raw_out = attrs.get(OBSERVATION_OUTPUT)
    if op in sc.AGENT_OPERATIONS:  # the trace's input/output when the span carries them (update_trace)
        raw_in = attrs.get(TRACE_INPUT) if raw_in is None else raw_in
        raw_out = attrs.get(TRACE_OUTPUT) if raw_out is None else raw_out
    if sc.is_inference(op) or op == sc.OP_EMBEDDINGS:
        out.update(_generation(attrs, raw_in, raw_out))
    elif op in sc.AGENT_OPERATIONS:
        if (question := question_of(raw_in)) is not None:
            out[sc.INPUT_MESSAGES] = [_text_message("user", question)]
        if (answer := answer_of(raw_out)) is not None:
            out[sc.OUTPUT_MESSAGES] = [_text_message("assistant", answer)]
        name_key = sc.AGENT_NAME if op == sc.OP_INVOKE_AGENT else sc.WORKFLOW_NAME
        if (name := as_str(attrs.get(TRACE_NAME)) or as_str(span.name)) is not None:
            out[name_key] = name
    elif op == sc.OP_EXECUTE_TOOL:
        args, result, call_id = tool_io(raw_in, raw_out)
        out.update({sc.TOOL_NAME: span.name, sc.TOOL_CALL_ARGUMENTS: args, sc.TOOL_CALL_RESULT: result})
        if call_id is not None:
            out[sc.TOOL_CALL_ID] = call_id
    elif op == sc.OP_RETRIEVAL:
        if (docs := _documents(raw_out)) is not None:
            out[sc.RETRIEVAL_DOCUMENTS] = docs
        if (query := question_of(raw_in)) is not None:
            out[sc.RETRIEVAL_QUERY_TEXT] = query
    level = as_str(attrs.get(OBSERVATION_LEVEL))
    if level is not None and level.upper() == "ERROR":
        out[sc.ERROR_TYPE] = as_str(attrs.get(OBSERVATION_STATUS)) or "ERROR"
    session = as_str(attrs.get(SESSION_ID)) or as_str(attrs.get("session.id"))
    if session is not None:
        out[sc.CONVERSATION_ID] = session
    return {k: v for k, v in out.items() if k not in attrs and v is not None}


def _generation(attrs: Mapping[str, Any], raw_in: Any, raw_out: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    model = as_str(attrs.get(OBSERVATION_MODEL))
    if model is not None:
        out[sc.REQUEST_MODEL] = out[sc.RESPONSE_MODEL] = model
    inputs = parse_messages(raw_in) if raw_in is not None else []
    if not text_of(inputs, _USER) and (question := question_of(raw_in)) is not None:
        inputs = [Message("user", question)]
    if inputs:
        out[sc.INPUT_MESSAGES] = [to_parts(m) for m in inputs]
    outputs = parse_messages(raw_out, "assistant") if raw_out is not None else []
    if not any(m.content or m.tool_calls for m in outputs if m.role in _OUTPUT_ROLES):
        answer = answer_of(raw_out)
        outputs = [Message("assistant", answer)] if answer is not None else []
    if outputs:
        out[sc.OUTPUT_MESSAGES] = [to_parts(m) for m in outputs]
    usage = as_dict(attrs.get(OBSERVATION_USAGE))
    if usage is not None:
        tin = next((n for k in _INPUT_USAGE if (n := as_count(usage.get(k))) is not None), None)
        tout = next((n for k in _OUTPUT_USAGE if (n := as_count(usage.get(k))) is not None), None)
        out[sc.USAGE_INPUT_TOKENS], out[sc.USAGE_OUTPUT_TOKENS] = tin, tout
    return out


def to_parts(message: Message) -> dict[str, Any]:
    """A parsed message back in the GenAI parts form (what ``gen_ai.input.messages`` holds)."""
    parts: list[dict[str, Any]] = []
    if message.role == "tool" and message.tool_call_id is not None:
        parts.append({"type": "tool_call_response", "id": message.tool_call_id, "response": message.content})
    elif message.content is not None:
        parts.append({"type": "text", "content": message.content})
    parts.extend({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
                 for c in message.tool_calls)
    return {"role": message.role, "parts": parts}


def _text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _documents(raw: Any) -> list[Any] | None:
    """The retrieved documents of a retriever output: a list, or a list under a documents-like key."""
    value = decode(raw)
    for _ in range(2):
        if isinstance(value, list):
            return value
        if not is_mapping(value):
            return None
        value = next((value[k] for k in _DOC_LISTS if isinstance(value.get(k), list)), None)
    return None
