"""The LLM calls of an OpenLLMetry trace: one per underlying model request.

An LLM span is one whose operation (``gen_ai.operation.name``, ``llm.request.type``, see
:func:`evald.mapping.openllmetry_attrs.llm_operation`) is ``chat``, ``text_completion`` or ``generate_content``.
Content comes from :func:`evald.mapping.messages.call_content` on the span with the legacy indexed quirks
normalised first (JSON ``gen_ai.input.messages`` / ``gen_ai.output.messages`` of 0.54+, indexed
``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` of older releases, or per-message log records when
``use_legacy_attributes=False``). When two instrumentations trace the same request (a LangChain/LlamaIndex LLM span
around the provider's span), only the innermost span is a call; a wrapper around exactly one call completes that
call's missing content, model and usage, so tokens are counted once; two LLM spans with the same
``gen_ai.response.id`` (one response traced twice, not nested) also count once. Bad data gives warnings, never
exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evald import semconv as sc
from evald.mapping.case_parts import call_texts, lineage
from evald.mapping.messages import CallContent, call_content
from evald.mapping.openllmetry_attrs import error_of, finish_reasons, normalized, tokens
from evald.mapping.values import as_str, plain
from evald.model import LogRecord, SpanRecord


class LLMCall:
    """One model request with its content resolved (derived texts computed once: cases read them often)."""

    __slots__ = ("span", "operation", "content", "attrs", "error", "input_text", "output_text", "requested_tools",
                 "messages", "tokens", "finish_reasons")

    def __init__(self, span: SpanRecord, operation: str, content: CallContent, attrs: dict[str, Any],
                 error: str | None) -> None:
        self.span = span
        self.operation = operation
        self.content = content
        self.attrs = attrs  # the span's attributes (then its wrapper's, when it has one); a dict: compiled reads
        self.error = error  # why it failed (error.type / exception type), None when it did not
        self.input_text, self.output_text, self.requested_tools, self.messages = call_texts(content)
        self.tokens: tuple[int | None, int | None, int | None] = tokens(attrs)
        self.finish_reasons: list[str] = finish_reasons(attrs, content.finish_reasons)


def build_calls(spans: Sequence[SpanRecord], by_id: Mapping[str, SpanRecord], ops: Mapping[str, str],
                logs: Mapping[str, Sequence[LogRecord]], warnings: list[str]) -> list[LLMCall]:
    """The trace's LLM calls in span start order (``spans`` sorted, ``ops`` = operation per span id)."""
    llm_ids = {sid for sid, op in ops.items() if sc.is_inference(op)}
    nearest: dict[str, str] = {}  # LLM span -> the nearest LLM span above it
    for sid in llm_ids:
        wrapper = next((a.span_id for a in lineage(by_id[sid], by_id)[1:] if a.span_id in llm_ids), None)
        if wrapper is not None:
            nearest[sid] = wrapper
    wrappers = set(nearest.values())
    leaves: dict[str, int] = {}  # wrapping LLM span -> leaf calls under it
    for sid in llm_ids - wrappers:
        seen: set[str] = set()
        up = nearest.get(sid)
        while up is not None and up not in seen:
            seen.add(up)
            leaves[up] = leaves.get(up, 0) + 1
            up = nearest.get(up)
    calls: list[LLMCall] = []
    responses: set[str] = set()
    for span in spans:
        sid = span.span_id
        if sid not in llm_ids or sid in wrappers:
            continue
        try:
            norm = normalized(span)
            content = _content(norm, logs)
            attrs = plain(norm.attributes)
            wrapper_id = nearest.get(sid)
            if wrapper_id is not None and leaves.get(wrapper_id, 0) == 1:
                outer = normalized(by_id[wrapper_id])
                content = _completed(content, _content(outer, logs))
                attrs = {**outer.attributes, **norm.attributes}  # the span's own values win (keys in ChainMap order)
            response_id = as_str(attrs.get(sc.RESPONSE_ID))
            if response_id is not None:
                if response_id in responses:  # the same response traced twice outside each other's span
                    continue
                responses.add(response_id)
            calls.append(LLMCall(span, ops[sid], content, attrs, error_of(span)))
        except Exception as err:  # garbage must never escape a mapper
            warnings.append(f"span {sid}: unreadable LLM span ({type(err).__name__})")
    return calls


def _content(span: SpanRecord, logs: Mapping[str, Sequence[LogRecord]]) -> CallContent:
    """Content of a span already passed through :func:`normalized`."""
    return call_content(span, logs.get(span.span_id, ()))


def _completed(inner: CallContent, outer: CallContent) -> CallContent:
    return CallContent(inner.input or outer.input, inner.output or outer.output, inner.system or outer.system,
                       inner.finish_reasons or outer.finish_reasons)


def embedding_queries(spans: Sequence[SpanRecord], ops: Mapping[str, str], logs: Mapping[str, Sequence[LogRecord]]
                      ) -> list[str]:
    """Texts embedded one at a time (a RAG retrieval query) and vector-DB / retrieval query texts, in span order."""
    out: list[str] = []
    for span in spans:
        try:
            attrs = plain(span.attributes)
            query = attrs.get(sc.RETRIEVAL_QUERY_TEXT) or attrs.get("db.query.text")
            if isinstance(query, str) and query.strip():
                out.append(query.strip())
            elif ops.get(span.span_id) == sc.OP_EMBEDDINGS:
                inputs = _content(normalized(span), logs).input
                if len(inputs) == 1 and inputs[0].content:
                    out.append(inputs[0].content.strip())
        except Exception:  # an unreadable query only loses the RAG question heuristic
            continue
    return out
