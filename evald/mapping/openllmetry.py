"""Mapper for OpenLLMetry / Traceloop traces (both generations): spans -> EvalCases.

Claims a trace when a span carries an attribute only OpenLLMetry writes: ``traceloop.*`` (SDK workflow / task /
agent / tool spans, association properties), ``llm.request.type`` / ``llm.is_streaming`` /
``llm.usage.total_tokens`` / ``llm.headers`` (releases before 0.54), their 0.54+ renames ``gen_ai.is_streaming`` /
``gen_ai.headers``, or the indexed ``gen_ai.prompt.0.*`` / ``gen_ai.completion.0.*`` content form. Route it before
``genai_semconv`` (whose spans never carry these keys).

One ``llm_call`` case per model request (see :mod:`evald.mapping.openllmetry_calls`) and one ``trace`` case per
trace. The trace's question comes from the outermost workflow/agent span's ``traceloop.entity.input`` (see
:mod:`evald.mapping.openllmetry_entities`), else a retrieval/embedding query found inside the first prompt (RAG),
else the first call's last user message; its answer from that span's ``traceloop.entity.output``, else the last
call's assistant text. Tool calls: :mod:`evald.mapping.openllmetry_tools`; documents:
:mod:`evald.mapping.openllmetry_retrieval`. Not evaluable: ``no_inference_span`` (e.g. embeddings only);
a call recorded without content (``TRACELOOP_TRACE_CONTENT=false``) still gives its cases, with the content
absent. Pure; bad data gives warnings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final

from evald import semconv as sc
from evald.case import EvalCase, new_eval_case
from evald.frozen import constructor
from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping import openllmetry_attrs as ol
from evald.mapping.case_parts import (
    ToolLedger,
    answered_model,
    case_service_name,
    extent_ms,
    lineage,
    present,
    span_end,
    sum_known,
)
from evald.mapping.messages import call_content, text_of
from evald.mapping.openllmetry_calls import LLMCall, build_calls, embedding_queries
from evald.mapping.openllmetry_entities import DecodeMemo, answer_of, question_of
from evald.mapping.openllmetry_retrieval import trace_documents
from evald.mapping.openllmetry_tools import tool_from_span
from evald.mapping.values import as_str, plain
from evald.model import AssembledTrace, LogRecord, SpanRecord
from evald.span_reads import duration_ms, is_root, service_name

_ENTITY_KINDS: Final = frozenset({ol.KIND_WORKFLOW, ol.KIND_AGENT})
_SESSION_KEYS: Final = ("session_id", "sessionId", "session", "conversation_id", "thread_id", "chat_id")
_USER_KEYS: Final = ("user_id", "userId", "user")
#: MappingResult's construction as a plain function (evald.frozen: no type call, no keyword matching)
_new_result: Final = constructor(MappingResult)


class OpenLLMetryMapper:
    """SpanMapper for OpenLLMetry (Traceloop) spans."""

    name: ClassVar[str] = "openllmetry"

    def __init__(self, llm_call_cases: bool = True) -> None:
        #: build the ``llm_call`` cases (False when no configured metric scores them: the trace case only)
        self.llm_call_cases = llm_call_cases

    def matches(self, trace: AssembledTrace) -> bool:
        try:
            return any(ol.is_openllmetry_span(s) for s in trace.spans)
        except Exception:  # a hostile attributes mapping: not ours
            return False

    def map(self, trace: AssembledTrace) -> MappingResult:
        warnings: list[str] = []
        logs: dict[str, list[LogRecord]] = {}
        for log in trace.logs:
            logs.setdefault(log.span_id or "", []).append(log)
        spans = sorted(trace.spans, key=lambda s: (s.start_time_unix_nano, s.span_id))
        by_id = {s.span_id: s for s in spans}
        ops = {s.span_id: op for s in spans if (op := _operation(s)) is not None}
        calls = build_calls(spans, by_id, ops, logs, warnings)
        if not calls:
            detail = "operations: " + ",".join(sorted(set(ops.values()))) if ops else ""
            code = "unreadable_inference_span" if warnings else "no_inference_span"
            return MappingResult(not_evaluable=(NotEvaluable(code, self.name, detail),), warnings=tuple(warnings))
        ledger = _tool_ledger(spans, ops, calls, warnings)
        cases: list[EvalCase] = []
        skipped: list[NotEvaluable] = []
        for call in calls if self.llm_call_cases else ():  # a case for every call, whatever content it recorded
            if not _records_a_request(call):
                continue  # a framework wrapper's husk (OpenLLMetry Haystack: only output keys); the trace case keeps it
            try:
                cases.append(self._llm_case(trace, call, ledger, by_id))
            except Exception as err:
                skipped.append(NotEvaluable("mapper_error", self.name, f"llm_call: {type(err).__name__}",
                                            "llm_call", call.span.span_id))
        try:
            trace_case = self._trace_case(trace, spans, by_id, ops, calls, ledger, logs, warnings)
        except Exception as err:
            trace_case = NotEvaluable("mapper_error", self.name, f"trace case: {type(err).__name__}")
        if isinstance(trace_case, NotEvaluable):
            skipped.append(trace_case)
        else:
            cases.append(trace_case)
        return _new_result(tuple(cases), tuple(skipped), tuple(warnings))

    def _llm_case(self, trace: AssembledTrace, call: LLMCall, ledger: ToolLedger,
                  by_id: Mapping[str, SpanRecord]) -> EvalCase:
        attrs = call.attrs
        tin, tout, total = call.tokens
        chain = lineage(call.span, by_id)
        meta: dict[str, Any] = {"convention": self.name, "operation": call.operation, **span_end(call.span), **present(
            response_id=as_str(attrs.get(sc.RESPONSE_ID)), agent_name=_agent_name(chain),
            workflow_name=next((w for s in chain if (w := as_str(s.attributes.get(ol.WORKFLOW_NAME)))), None),
            conversation_id=as_str(attrs.get(sc.CONVERSATION_ID)), prompt_key=as_str(attrs.get(ol.PROMPT_KEY)),
            prompt_version=as_str(attrs.get(ol.PROMPT_VERSION)), error_type=call.error)}
        if call.finish_reasons:
            meta["finish_reasons"] = call.finish_reasons
        if (streaming := ol.is_streaming(attrs)) is not None:
            meta["streaming"] = streaming
        return new_eval_case(
            input=call.input_text, output=call.output_text, messages=call.messages,
            tool_calls=tuple(ledger.resolve(c) for c in call.requested_tools),
            latency_ms=duration_ms(call.span), token_count=_token_count(tin, tout, total), metadata=meta,
            trace_id=trace.trace_id, span_id=call.span.span_id, scope="llm_call",
            model=as_str(attrs.get(sc.RESPONSE_MODEL)) or as_str(attrs.get(sc.REQUEST_MODEL)),
            request_model=as_str(attrs.get(sc.REQUEST_MODEL)), provider=sc.provider_of(attrs),
            system_prompt=call.content.system, input_tokens=tin, output_tokens=tout, error=call.error is not None,
            service_name=service_name(call.span),
        )

    def _trace_case(self, trace: AssembledTrace, spans: Sequence[SpanRecord], by_id: Mapping[str, SpanRecord],
                    ops: Mapping[str, str], calls: Sequence[LLMCall], ledger: ToolLedger,
                    logs: Mapping[str, Sequence[LogRecord]], warnings: list[str]) -> EvalCase | NotEvaluable:
        entities = _entity_spans(spans, by_id)
        memo: DecodeMemo = {}  # entity payloads, decoded once for the question, the answer and the documents
        question = next((q for s in entities if (q := _entity_question(s, memo))), None) or _rag_question(
            calls, embedding_queries(spans, ops, logs)) or next((t for c in calls if (t := c.input_text)), None)
        answer = next((a for s in entities if (a := _entity_answer(s, memo))), None) or next(
            (t for c in reversed(calls) if (t := c.output_text) and _records_a_request(c)), None)
        error = next((c.error for c in calls if c.error), None)
        roots = [s for s in spans if is_root(s)]
        anchor = roots[0] if roots else calls[0].span
        last = calls[-1]
        tin = sum_known(c.tokens[0] for c in calls)
        tout = sum_known(c.tokens[1] for c in calls)
        totals = sum_known(c.tokens[2] for c in calls) if tin is None and tout is None else None
        assoc: dict[str, Any] = {}
        for span in (*entities, *spans):
            for key, value in ol.association_properties(span.attributes).items():
                assoc.setdefault(key, value)
        meta: dict[str, Any] = {"convention": self.name, "llm_call_count": len(calls), **span_end(anchor), **present(
            workflow_name=_workflow_name(entities, spans), agent_name=_agent_name(entities),
            conversation_id=as_str(last.attrs.get(sc.CONVERSATION_ID)), error_type=error,
            session_id=next((as_str(assoc[k]) for k in _SESSION_KEYS if k in assoc), None),
            user_id=next((as_str(assoc[k]) for k in _USER_KEYS if k in assoc), None))}
        if assoc:
            meta["association_properties"] = assoc
        ids = frozenset(sid for sid, op in ops.items() if sc.is_inference(op))
        return new_eval_case(
            input=question, output=answer, context=trace_documents(spans, ids, warnings, memo), messages=last.messages,
            tool_calls=tuple(ledger.calls.values()),
            latency_ms=duration_ms(roots[0]) if len(roots) == 1 else extent_ms(spans),
            token_count=_token_count(tin, tout, totals), metadata=meta, trace_id=trace.trace_id,
            span_id=anchor.span_id, scope="trace", model=answered_model(
                as_str(last.attrs.get(sc.RESPONSE_MODEL)), as_str(last.attrs.get(sc.REQUEST_MODEL)),
                last.error is not None),
            request_model=as_str(last.attrs.get(sc.REQUEST_MODEL)),
            provider=next((p for c in reversed(calls) if (p := sc.provider_of(c.attrs))), None),
            system_prompt=next((c.content.system for c in calls if c.content.system), None),
            input_tokens=tin, output_tokens=tout, error=error is not None,
            service_name=case_service_name(anchor, spans),
        )


def _operation(span: SpanRecord) -> str | None:
    try:
        return ol.llm_operation(span)
    except Exception:  # a hostile attributes mapping; treat the span as non-GenAI
        return None


def _tool_ledger(spans: Sequence[SpanRecord], ops: Mapping[str, str], calls: Sequence[LLMCall],
                 warnings: list[str]) -> ToolLedger:
    ledger = ToolLedger()
    by_span = {c.span.span_id: c for c in calls}
    for span in spans:
        try:
            if (call := by_span.get(span.span_id)) is not None:
                ledger.add_call(call.content.input, call.requested_tools)
            elif not sc.is_inference(ops.get(span.span_id)) and ol.span_kind(span) == ol.KIND_TOOL:
                ledger.add_executed(tool_from_span(span))
        except Exception as err:  # garbage must never escape a mapper
            warnings.append(f"span {span.span_id}: unreadable tool data ({type(err).__name__})")
    return ledger


def _entity_spans(spans: Sequence[SpanRecord], by_id: Mapping[str, SpanRecord]) -> list[SpanRecord]:
    """Workflow/agent spans (and a root span carrying entity data), outermost first."""
    found = [s for s in spans if ol.span_kind(s) in _ENTITY_KINDS or (
        is_root(s) and (ol.ENTITY_INPUT in s.attributes or ol.ENTITY_OUTPUT in s.attributes))]
    return sorted(found, key=lambda s: (len(lineage(s, by_id)), s.start_time_unix_nano))


def _entity_question(span: SpanRecord, memo: DecodeMemo) -> str | None:
    attrs = plain(span.attributes)  # read as a dict (compiled: direct calls, no method lookup)
    if ol.ENTITY_INPUT in attrs and (text := question_of(attrs[ol.ENTITY_INPUT], memo)):
        return text
    if sc.INPUT_MESSAGES in attrs:  # an agent span in the GenAI shape (0.54+ agent instrumentations)
        return text_of(call_content(span).input, frozenset({"user"}), last=True)
    return None


def _entity_answer(span: SpanRecord, memo: DecodeMemo) -> str | None:
    attrs = plain(span.attributes)
    if ol.ENTITY_OUTPUT in attrs and (text := answer_of(attrs[ol.ENTITY_OUTPUT], memo)):
        return text
    if sc.OUTPUT_MESSAGES in attrs:
        return text_of(call_content(span).output, None, last=True)
    return None


def _rag_question(calls: Sequence[LLMCall], queries: Sequence[str]) -> str | None:
    """A retrieval query that the first prompt quotes: the prompt is context + question, the query the question."""
    prompt = next((t for c in calls if (t := c.input_text)), None)
    if not prompt:
        return None
    return next((q for q in queries if len(q) >= 3 and q != prompt.strip() and q in prompt), None)


def _agent_name(spans: Iterable[SpanRecord]) -> str | None:
    for span in spans:
        attrs = plain(span.attributes)
        name = as_str(attrs.get(sc.AGENT_NAME))
        if name is None and ol.span_kind(span) == ol.KIND_AGENT:
            name = as_str(attrs.get(ol.ENTITY_NAME))
        if name:
            return name
    return None


def _workflow_name(entities: Sequence[SpanRecord], spans: Sequence[SpanRecord]) -> str | None:
    for span in (*entities, *spans):
        attrs = plain(span.attributes)
        if name := as_str(attrs.get(ol.WORKFLOW_NAME)) or as_str(attrs.get(sc.WORKFLOW_NAME)):
            return name
    return next((n for s in entities if ol.span_kind(s) == ol.KIND_WORKFLOW
                 and (n := as_str(s.attributes.get(ol.ENTITY_NAME)))), None)


def _token_count(tin: int | None, tout: int | None, total: int | None) -> int | None:
    """Input + output when known; the reported total only when neither part is (never both added)."""
    return sum_known((tin, tout)) if tin is not None or tout is not None else total


def _records_a_request(call: LLMCall) -> bool:
    """Whether the span records anything of a model request: input, model, usage, response id or failure (without
    content capture every real call still has its model and usage; OpenLLMetry Haystack's chat span has none)."""
    attrs = call.attrs
    return bool(call.input_text or call.error is not None or any(v is not None for v in call.tokens)
                or as_str(attrs.get(sc.REQUEST_MODEL)) or as_str(attrs.get(sc.RESPONSE_MODEL))
                or as_str(attrs.get(sc.RESPONSE_ID)))
