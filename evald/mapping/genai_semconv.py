"""Mapper for the OpenTelemetry GenAI semantic conventions (current and deprecated forms): spans -> EvalCases.

One ``llm_call`` case per inference span (``chat`` / ``text_completion`` / ``generate_content``) and one ``trace``
case per trace. Content is read from span attributes, from log records joined by span id
(``gen_ai.client.inference.operation.details`` or per-message events) or from legacy prompt attributes; see
``evald.mapping.messages``. Vendor and framework shapes (pydantic-ai, logfire, Langfuse) are first rewritten as
GenAI attributes by :mod:`evald.mapping.vendor_payloads`; a span carrying none of their keys is not copied.
Inference spans that trace the same request twice (nested, same response id, ...) count once, see
:mod:`evald.mapping.genai_calls`. Tool calls are merged by call id across ``execute_tool`` spans, inference
outputs and the tool responses of later inference inputs. Trace tokens are the sum over the calls, else (calls
without usage) the outermost agent span's run total. Not evaluable: ``no_inference_span`` (e.g. embeddings only),
a span whose content was not captured (or was masked) still gives its cases, with the content fields absent
(``None``): model, tokens, latency, error and finish reasons are scored and content metrics skip. Pure; bad data gives
warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from evald import semconv as sc
from evald.case import Document, EvalCase, ToolCall, new_eval_case, new_tool_call
from evald.frozen import constructor
from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping import vendor_payloads as vendor
from evald.mapping.case_parts import (
    ToolLedger,
    answered_model,
    case_service_name,
    extent_ms,
    lineage,
    present,
    span_end,
    sum_known,
    tool_result,
)
from evald.mapping.genai_calls import InferenceCall, dedupe_calls
from evald.mapping.mcp import mcp_tool_calls
from evald.mapping.messages import CallContent, call_content, event_payload, text_of
from evald.mapping.values import as_float, as_str, documents, parse_json_container, plain, str_list
from evald.model import STATUS_ERROR, AssembledTrace, LogRecord, SpanRecord
from evald.span_reads import duration_ms, is_root, service_name

_NO_EVENTS: Final[frozenset[str]] = frozenset()
_USER: Final = frozenset({"user"})
#: MappingResult's construction as a plain function (evald.frozen: no type call, no keyword matching)
_new_result: Final = constructor(MappingResult)


class GenAISemconvMapper:
    """SpanMapper for ``gen_ai.*`` spans."""

    name: ClassVar[str] = "genai_semconv"

    def __init__(self, llm_call_cases: bool = True) -> None:
        #: build the ``llm_call`` cases (False when no configured metric scores them: the trace case only)
        self.llm_call_cases = llm_call_cases

    def matches(self, trace: AssembledTrace) -> bool:
        return any(_operation(s) is not None or _vendor_candidate(s) for s in trace.spans)

    def map(self, trace: AssembledTrace) -> MappingResult:
        warnings: list[str] = []
        logs: dict[str, list[LogRecord]] = {}
        for log in trace.logs:
            logs.setdefault(log.span_id or "", []).append(log)
        spans = sorted(map(vendor.normalize, trace.spans), key=lambda s: (s.start_time_unix_nano, s.span_id))
        by_id = {s.span_id: s for s in spans}
        ops = {s.span_id: op for s in spans if (op := _operation(s)) is not None}
        attrs = {s.span_id: _merged_attrs(s, logs.get(s.span_id, [])) for s in spans if s.span_id in ops}
        calls: list[InferenceCall] = []
        for span in (s for s in spans if sc.is_inference(ops.get(s.span_id))):
            try:
                error = span.status_code == STATUS_ERROR or as_str(attrs[span.span_id].get(sc.ERROR_TYPE)) is not None
                content = call_content(span, logs.get(span.span_id, []))
                calls.append(InferenceCall(span, ops[span.span_id], content, attrs[span.span_id], error))
            except Exception as err:  # garbage must never escape a mapper
                warnings.append(f"span {span.span_id}: unreadable inference span ({type(err).__name__})")
        try:
            calls = dedupe_calls(calls, by_id)  # two instrumentations of one request count once
        except Exception as err:
            warnings.append(f"inference spans not de-duplicated ({type(err).__name__})")
        opened = [c for c in calls if vendor.stream_opening(c.span.attributes, c.output_text, c.tokens, c.error)]
        if opened and len(opened) == len(calls):
            return MappingResult(not_evaluable=(NotEvaluable("stream_opening", self.name, opened[0].span.name),),
                                 warnings=tuple(warnings))
        if not calls:
            detail = "operations: " + ",".join(sorted(set(ops.values()))) if ops else ""
            code = "unreadable_inference_span" if warnings else "no_inference_span"
            return MappingResult(not_evaluable=(NotEvaluable(code, self.name, detail),), warnings=tuple(warnings))
        tools = _merge_tools(spans, ops, attrs, calls, warnings)
        cases: list[EvalCase] = []
        skipped: list[NotEvaluable] = []
        for call in calls if self.llm_call_cases else ():  # a case for every call, whatever content it recorded
            agent = next((n for a in lineage(call.span, by_id) if (n := as_str(a.attributes.get(sc.AGENT_NAME)))),
                         None)
            cases.append(self._llm_case(trace, call, tools, agent))
        agents: list[tuple[SpanRecord, CallContent]] = []
        for span in sorted((s for s in spans if ops.get(s.span_id) in sc.AGENT_OPERATIONS),
                           key=lambda s: (len(lineage(s, by_id)), s.start_time_unix_nano)):
            try:
                agents.append((span, call_content(span, logs.get(span.span_id, []))))
            except Exception as err:
                warnings.append(f"span {span.span_id}: unreadable agent content ({type(err).__name__})")
        try:
            trace_case = self._trace_case(trace, spans, calls, agents, tools, attrs, warnings)
        except Exception as err:
            trace_case = NotEvaluable("mapper_error", self.name, f"trace case: {type(err).__name__}")
        if isinstance(trace_case, NotEvaluable):
            skipped.append(trace_case)
        else:
            cases.append(trace_case)
        return _new_result(tuple(cases), tuple(skipped), tuple(warnings))

    def _llm_case(self, trace: AssembledTrace, call: InferenceCall, tools: Mapping[str, ToolCall], agent: str | None
                  ) -> EvalCase:
        attrs = call.attrs
        tin, tout = call.tokens
        reasons = str_list(attrs.get(sc.RESPONSE_FINISH_REASONS)) or list(call.content.finish_reasons)
        meta: dict[str, Any] = {"convention": self.name, "operation": call.operation, **span_end(call.span), **present(
            response_id=as_str(attrs.get(sc.RESPONSE_ID)), agent_name=agent,
            conversation_id=as_str(attrs.get(sc.CONVERSATION_ID)))}
        if reasons:
            meta["finish_reasons"] = reasons
        ttfc = as_float(attrs.get(sc.RESPONSE_TIME_TO_FIRST_CHUNK))
        if ttfc is not None and ttfc >= 0:
            meta["time_to_first_token_ms"] = ttfc * 1000.0  # read by the time_to_first_token metric
        request_model = as_str(attrs.get(sc.REQUEST_MODEL))
        return new_eval_case(
            input=call.input_text, output=call.output_text, messages=call.messages,
            tool_calls=tuple(tools.get(c.id, c) if c.id else c for c in call.requested_tools),
            latency_ms=duration_ms(call.span), token_count=sum_known((tin, tout)), metadata=meta,
            trace_id=trace.trace_id, span_id=call.span.span_id, scope="llm_call",
            model=as_str(attrs.get(sc.RESPONSE_MODEL)) or request_model,
            request_model=request_model, provider=sc.provider_of(attrs),
            system_prompt=call.content.system, input_tokens=tin, output_tokens=tout, error=call.error,
            service_name=service_name(call.span),
        )

    def _trace_case(self, trace: AssembledTrace, spans: Sequence[SpanRecord], calls: Sequence[InferenceCall],
                    agents: Sequence[tuple[SpanRecord, CallContent]], tools: Mapping[str, ToolCall],
                    attrs: dict[str, dict[str, Any]], warnings: list[str]) -> EvalCase | NotEvaluable:
        # the question of the current turn: with chat history, the last user message before any model reply
        user_input = next((t for _, c in agents if (t := text_of(c.input, _USER, last=True))), None) or next(
            (t for call in calls if (t := call.input_text)), None)
        output = next((t for _, c in agents if (t := text_of(c.output, None, last=True))), None) or next(
            (t for call in reversed(calls) if (t := call.output_text)), None)
        error = any(call.error for call in calls)
        roots = [s for s in spans if is_root(s)]
        anchor = roots[0] if roots else next(s for s in spans if s.span_id in attrs)
        last = calls[-1]
        if len(calls) == 1:  # the usual trace: its one call's usage
            tin, tout = last.tokens
        else:
            tin = sum_known(c.tokens[0] for c in calls)
            tout = sum_known(c.tokens[1] for c in calls)
        if tin is None and tout is None:  # calls without usage: the run's total on the outermost agent span
            tin, tout = next((u for a, _ in agents if (u := vendor.agent_usage(a.attributes)) != (None, None)),
                             (None, None))
        system = next((c.system for _, c in agents if c.system), None) or next(
            (c.content.system for c in calls if c.content.system), None)
        names = [(as_str(a.attributes.get(sc.AGENT_NAME)), as_str(a.attributes.get(sc.WORKFLOW_NAME)))
                 for a, _ in agents]
        meta: dict[str, Any] = {"convention": self.name, "llm_call_count": len(calls), **span_end(anchor), **present(
            agent_name=next((a for a, _ in names if a), None), workflow_name=next((w for _, w in names if w), None),
            conversation_id=as_str(last.attrs.get(sc.CONVERSATION_ID)) or next(
                (c for a, _ in agents if (c := as_str(a.attributes.get(sc.CONVERSATION_ID)))), None))}
        return new_eval_case(
            input=user_input, output=output, context=_documents(spans, attrs, warnings),
            messages=last.messages, tool_calls=tuple(tools.values()),
            latency_ms=duration_ms(roots[0]) if len(roots) == 1 else extent_ms(spans),
            token_count=sum_known((tin, tout)), metadata=meta, trace_id=trace.trace_id, span_id=anchor.span_id,
            scope="trace", model=answered_model(as_str(last.attrs.get(sc.RESPONSE_MODEL)),
                                                as_str(last.attrs.get(sc.REQUEST_MODEL)), last.error),
            request_model=as_str(last.attrs.get(sc.REQUEST_MODEL)),
            provider=next((p for c in reversed(calls) if (p := sc.provider_of(c.attrs))), None),
            system_prompt=system, input_tokens=tin, output_tokens=tout, error=error,
            service_name=case_service_name(anchor, spans),
        )


def _operation(span: SpanRecord) -> str | None:
    try:
        events = span.events
        return sc.operation_of(span.attributes, frozenset(e.name for e in events) if events else _NO_EVENTS)
    except Exception:  # a hostile attributes mapping; treat the span as non-GenAI
        return None


def _vendor_candidate(span: SpanRecord) -> bool:
    try:
        return vendor.is_candidate(span)
    except Exception:  # a hostile attributes mapping; treat the span as non-GenAI
        return False


def _merged_attrs(span: SpanRecord, logs: Sequence[LogRecord]) -> dict[str, Any]:
    """Span attributes, completed by the attributes/body of its log records (span values win); a dict, so that
    compiled code reads it with direct calls."""
    if not logs:
        return plain(span.attributes)
    merged: dict[str, Any] = {}
    for log in logs:
        merged.update(event_payload(log.attributes, log.body))
    merged.update(span.attributes)
    return merged


def _merge_tools(spans: Sequence[SpanRecord], ops: Mapping[str, str], attrs: dict[str, dict[str, Any]],
                 calls: Sequence[InferenceCall], warnings: list[str]) -> dict[str, ToolCall]:
    """Every tool call of the trace in order, one entry per call id (id-less calls get a positional key).

    Sources, in span start order: the tool calls an inference output requested; in an inference input, tool
    calls of the current turn (after the last user message; earlier turns only complete known ids) and tool
    responses; ``execute_tool`` spans (an id-less one completes the first open call of the same name); MCP
    ``tools/call`` client spans no ``execute_tool`` span records (evald/mapping/mcp.py), like id-less tool spans.
    """
    ledger = ToolLedger()
    by_span = {c.span.span_id: c for c in calls}
    try:
        mcp = mcp_tool_calls(spans, ops)
    except Exception as err:
        mcp = {}
        warnings.append(f"MCP spans not read ({type(err).__name__})")
    for span in spans:
        try:
            if (call := by_span.get(span.span_id)) is not None:
                ledger.add_call(call.content.input, call.requested_tools)
            elif ops.get(span.span_id) == sc.OP_EXECUTE_TOOL:
                ledger.add_executed(_tool_from_span(span, attrs[span.span_id]))
            elif (tool := mcp.get(span.span_id)) is not None:
                ledger.add_executed(tool)
        except Exception as err:
            warnings.append(f"span {span.span_id}: unreadable tool data ({type(err).__name__})")
    return ledger.calls


def _tool_from_span(span: SpanRecord, attrs: dict[str, Any]) -> ToolCall:
    result = attrs.get(sc.TOOL_CALL_RESULT)
    return new_tool_call(
        name=as_str(attrs.get(sc.TOOL_NAME)) or "", arguments=parse_json_container(attrs.get(sc.TOOL_CALL_ARGUMENTS)),
        result=tool_result(result) if result is not None else None, id=as_str(attrs.get(sc.TOOL_CALL_ID)),
        error=span.status_code == STATUS_ERROR or as_str(attrs.get(sc.ERROR_TYPE)) is not None)


def _documents(spans: Sequence[SpanRecord], attrs: dict[str, dict[str, Any]], warnings: list[str]
               ) -> tuple[Document, ...]:
    docs: list[Document] = []
    for span in spans:
        source = attrs.get(span.span_id)
        raw = (source if source is not None else plain(span.attributes)).get(sc.RETRIEVAL_DOCUMENTS)
        if raw is None:
            continue
        found = documents(raw)
        if found is None:
            warnings.append(f"span {span.span_id}: {sc.RETRIEVAL_DOCUMENTS} is not a list")
        docs.extend(found or ())
    return tuple(docs)
