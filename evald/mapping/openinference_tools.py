"""Tool calls, retrieved documents and context (metadata, session, user, tags) of an OpenInference trace.

Tool spans (``openinference.span.kind = TOOL``): name from ``tool.name`` (else ``tool_call.function.name``, else
the span name), arguments from ``tool_call.function.arguments`` or ``input.value`` (a LangChain ``ToolCall`` dict
``{"name", "args", "id"}`` and a LlamaIndex ``{"kwargs": {...}}`` are unwrapped; ``tool.parameters`` is read only
when it is not a JSON schema), result from ``output.value`` (a LangChain ``ToolMessage`` dump is unwrapped to its
content, call id and status, a LlamaIndex ``ToolOutput`` to its ``raw_output`` and ``is_error``), id from
``tool_call.id`` / ``tool.id`` or the unwrapped payloads, error from the span status; the mapper merges them with
the calls' messages in :class:`evald.mapping.case_parts.ToolLedger`. Documents: RETRIEVER
``retrieval.documents.*`` and RERANKER ``reranker.output_documents.*``, completed (ids, scores) or replaced by the
documents in the span's ``output.value`` when the attributes lack them. Nothing raises on bad data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evald.case import Document, ToolCall
from evald.frozen import replace
from evald.mapping import openinference_fields as oi
from evald.mapping.case_parts import tool_result
from evald.mapping.openinference_payloads import payload
from evald.mapping.values import as_dict, as_str, is_mapping, parse_json_container, parse_structured, plain
from evald.model import SpanRecord


def _tool_message(value: Any) -> Mapping[str, Any] | None:
    """The body of a serialized LangChain ``ToolMessage`` (dump, constructor or flat), else ``None``."""
    if not is_mapping(value):
        return None
    for key in ("data", "kwargs"):
        inner = value.get(key)
        if is_mapping(inner) and "tool_call_id" in inner and "content" in inner:
            return inner
    return value if "tool_call_id" in value and "content" in value else None


def _is_schema(value: Any) -> bool:
    data = as_dict(value)
    return data is not None and ("properties" in data or data.get("type") == "object" or "$schema" in data)


def tool_from_span(span: SpanRecord) -> ToolCall:
    attrs = span.attributes
    call_id = as_str(attrs.get(oi.TOOL_CALL_ID)) or as_str(attrs.get(oi.TOOL_ID))
    name = as_str(attrs.get(oi.TOOL_NAME)) or as_str(attrs.get(oi.TOOL_CALL_FUNCTION_NAME))
    arguments: Any = parse_json_container(attrs.get(oi.TOOL_CALL_FUNCTION_ARGUMENTS))
    raw_in = payload(attrs, "input")
    if is_mapping(raw_in) and "args" in raw_in and "name" in raw_in:  # a LangChain ToolCall dict
        call_id = call_id or as_str(raw_in.get("id"))
        name = name or as_str(raw_in.get("name"))
        raw_in = raw_in.get("args")
    elif is_mapping(raw_in) and raw_in and set(raw_in) <= {"args", "kwargs"} and not raw_in.get("args") and (
            is_mapping(raw_in.get("kwargs"))):  # a LlamaIndex FunctionTool call: {"kwargs": {...}}
        raw_in = raw_in.get("kwargs")
    if arguments is None and raw_in is not None:
        arguments = parse_json_container(raw_in)
    if arguments is None and (params := attrs.get(oi.TOOL_PARAMETERS)) is not None and not _is_schema(params):
        arguments = parse_json_container(params)
    raw_out = payload(attrs, "output")
    error = oi.failed(span)
    result: Any = None
    if (message := _tool_message(raw_out)) is not None:
        call_id = call_id or as_str(message.get("tool_call_id"))
        name = name or as_str(message.get("name"))
        error = error or as_str(message.get("status")) == "error"
        result = tool_result(message.get("content"))
    elif is_mapping(raw_out) and "raw_output" in raw_out and "tool_name" in raw_out:  # a LlamaIndex ToolOutput
        name = name or as_str(raw_out.get("tool_name"))
        error = error or raw_out.get("is_error") is True
        result = tool_result(raw_out.get("raw_output"))
    elif raw_out is not None:
        result = tool_result(raw_out)
    return ToolCall(name=name or span.name or "", arguments=arguments, result=result, id=call_id, error=error)


def span_documents(span: SpanRecord, prefix: str) -> list[Document]:
    """Documents of a retriever/reranker span (attribute list first, ``output.value`` fills what it lacks)."""
    attrs = span.attributes
    docs = oi.documents(attrs, prefix)
    listed = _payload_documents(payload(attrs, "output")) if prefix == oi.RETRIEVAL_DOCUMENTS else []
    if not docs:
        return listed
    if len(listed) == len(docs):  # same documents, in order: take the ids/scores the attributes lack
        docs = [replace(d, id=d.id or p.id, score=d.score if d.score is not None else p.score,
                        content=d.content or p.content) for d, p in zip(docs, listed, strict=True)]
    return docs


def _payload_documents(value: Any) -> list[Document]:
    value = parse_structured(value)
    if is_mapping(value):
        value = value.get("documents")
    if not isinstance(value, list):
        return []
    docs: list[Document] = []
    for item in value:
        data = as_dict(item)
        if data is not None:
            kwargs = data.get("kwargs")  # a LangChain constructor dump
            docs.append(oi.document_from(kwargs if is_mapping(kwargs) else data))
    return docs


def unique_documents(docs: list[Document]) -> tuple[Document, ...]:
    seen: set[tuple[str | None, str | None]] = set()
    out: list[Document] = []
    for doc in docs:
        key = (doc.id, doc.content)
        if key == (None, None) or key not in seen:
            seen.add(key)
            out.append(doc)
    return tuple(out)


def context_of(owners: list[SpanRecord], spans: list[SpanRecord]) -> dict[str, Any]:
    """``metadata`` (JSON object) of the first of ``owners`` carrying one; ``session_id`` / ``user_id``: the first
    found along ``owners`` then ``spans`` (OpenInference propagates them to every span of the context)."""
    out: dict[str, Any] = {}
    for s in owners:
        if meta := as_dict(plain(s.attributes).get(oi.METADATA)):
            out["metadata"] = meta
            break
    session, user = _ids(owners, None, None)
    if session is None or user is None:
        session, user = _ids(spans, session, user)
    if session:
        out["session_id"] = session
    if user:
        out["user_id"] = user
    return out


def _ids(spans: list[SpanRecord], session: str | None, user: str | None) -> tuple[str | None, str | None]:
    """The first ``session.id`` and ``user.id`` along ``spans`` not already known, in one walk."""
    for s in spans:
        attrs = plain(s.attributes)
        if session is None:
            session = as_str(attrs.get(oi.SESSION_ID))
        if user is None:
            user = as_str(attrs.get(oi.USER_ID))
        if session is not None and user is not None:
            break
    return session, user


def first_str(spans: list[SpanRecord], attr: str) -> str | None:
    """The first non-empty string attribute ``attr`` along ``spans``."""
    for s in spans:
        if value := as_str(plain(s.attributes).get(attr)):
            return value
    return None


def tags_of(spans: list[SpanRecord]) -> tuple[str, ...]:
    seen: dict[str, None] = {}  # first-seen order, as dict.fromkeys (a Python-level call compiled)
    for s in spans:
        for t in oi.tags(s.attributes):
            seen[t] = None
    return tuple(seen)
