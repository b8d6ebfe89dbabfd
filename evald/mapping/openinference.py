"""Mapper for Arize OpenInference spans (``openinference.span.kind``): spans -> EvalCases (standards section 2).

One ``llm_call`` case per LLM span that made a model call (see ``openinference_calls``) and one ``trace`` case per
trace. LLM spans nested in another LLM span (LangChain's chat model span around the OpenAI client span) trace one
call: only the innermost is counted, completed from its wrapper when it is the wrapper's only call. Spans under an
EVALUATOR span (a judge's own calls) are ignored. The trace case takes the question and final answer from the
top-most CHAIN/AGENT span enclosing the calls (``input.value`` / ``output.value``, see ``openinference_payloads``),
else from the calls; tools from TOOL spans and messages, documents from RETRIEVER/RERANKER spans (see
``openinference_tools``); tokens and ``llm.cost.*`` summed over the counted calls; model = the last call's response
model; error = any call failed. Also read: ``session.id``, ``user.id``, ``metadata`` (JSON), ``tag.tags``,
``agent.name``.
Not evaluable: ``no_inference_span`` (only embeddings, retrievers, ...); a call whose content was hidden
(``OPENINFERENCE_HIDE_*``: ``__REDACTED__``) or not recorded still gives its cases, with that content absent.
A trace whose only model calls are OTel GenAI spans (an OpenInference chain around an OTel-instrumented client)
is handed to :class:`GenAISemconvMapper`. Pure; bad data gives warnings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

from evald.case import EvalCase, ToolCall, new_eval_case
from evald.interfaces import MappingResult, NotEvaluable
from evald.mapping import openinference_fields as oi
from evald.mapping.case_parts import (
    ToolLedger,
    answered_model,
    case_service_name,
    extent_ms,
    lineage,
    span_end,
    sum_known,
)
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openinference_calls import LLMCall, read_call, scalar_parameters
from evald.mapping.openinference_payloads import answer_text, payload, user_text
from evald.mapping.openinference_tools import (
    context_of,
    first_str,
    span_documents,
    tags_of,
    tool_from_span,
    unique_documents,
)
from evald.model import AssembledTrace, SpanRecord
from evald.span_reads import duration_ms, is_root, service_name

_NAME: Final = "openinference"
_FRAMES: Final = frozenset({oi.CHAIN, oi.AGENT})
_HELPER_SPAN: Final = "._prepare_chat_with_tools"  # LlamaIndex: builds the tool-call request, sends nothing


class OpenInferenceMapper:
    """SpanMapper for OpenInference spans. Route it before ``genai_semconv``."""

    name: ClassVar[str] = _NAME

    def __init__(self, llm_call_cases: bool = True) -> None:
        #: build the ``llm_call`` cases (False when no configured metric scores them: the trace case only)
        self.llm_call_cases = llm_call_cases

    def matches(self, trace: AssembledTrace) -> bool:
        try:
            for s in trace.spans:
                attrs = s.attributes
                if type(attrs) is dict:  # an exact dict (always, from OTLP): a C lookup
                    if oi.SPAN_KIND in attrs:
                        return True
                elif oi.SPAN_KIND in attrs:
                    return True
            return False
        except Exception:  # a hostile attributes mapping
            return False

    def map(self, trace: AssembledTrace) -> MappingResult:
        try:
            return self._map(trace)
        except Exception as err:  # garbage must never escape a mapper
            return MappingResult(not_evaluable=(NotEvaluable("mapper_error", self.name, type(err).__name__),))

    def _map(self, trace: AssembledTrace) -> MappingResult:
        spans = sorted(trace.spans, key=lambda s: (s.start_time_unix_nano, s.span_id))
        tree = _Tree(spans)
        llm_spans = [s for s in spans if tree.kind(s) == oi.LLM and not tree.judged(s)]
        if not llm_spans:
            genai = GenAISemconvMapper(self.llm_call_cases)
            if genai.matches(trace):
                return genai.map(trace)
            kinds = sorted({k for s in spans if (k := tree.kind(s))})
            return MappingResult(not_evaluable=(NotEvaluable("no_inference_span", self.name,
                                                             "kinds: " + ",".join(kinds)),))
        warnings: list[str] = []
        calls = _read_calls(llm_spans, tree, warnings)
        # LLM-kind spans that record no exchange at all (LlamaIndex's _prepare_chat_with_tools beside the real call;
        # by name too: with hidden content and a streamed call the real one records no more than the helper)
        calls = [c for c in calls if not c.span.name.endswith(_HELPER_SPAN)] or calls
        calls = [c for c in calls if not _records_no_exchange(c)] or calls
        if not calls:
            return MappingResult(not_evaluable=(NotEvaluable("unreadable_inference_span", self.name),),
                                 warnings=tuple(warnings))
        tools = _merge_tools(spans, tree, calls, warnings)
        cases: list[EvalCase] = []
        skipped: list[NotEvaluable] = []
        for call in calls if self.llm_call_cases else ():  # a case for every call, whatever content it recorded
            cases.append(self._llm_case(trace, call, tools, tree))
        try:
            trace_case = self._trace_case(trace, spans, tree, calls, tools, warnings)
        except Exception as err:
            trace_case = NotEvaluable("mapper_error", self.name, f"trace case: {type(err).__name__}")
        if isinstance(trace_case, NotEvaluable):
            skipped.append(trace_case)
        else:
            cases.append(trace_case)
        return MappingResult(cases=tuple(cases), not_evaluable=tuple(skipped), warnings=tuple(warnings))

    def _llm_case(self, trace: AssembledTrace, call: LLMCall, tools: dict[str, ToolCall], tree: _Tree
                  ) -> EvalCase:
        lineage = tree.lineage(call.span)
        meta: dict[str, Any] = {"convention": _NAME, "span_kind": oi.LLM, **span_end(call.span),
                                **context_of(lineage[:1], lineage)}
        if call.response_id:
            meta["response_id"] = call.response_id
        if call.finish_reasons:
            meta["finish_reasons"] = list(call.finish_reasons)
        if parameters := scalar_parameters(call):
            meta["invocation_parameters"] = parameters
        return new_eval_case(
            input=call.input_text, output=call.output_text, messages=call.messages,
            tool_calls=tuple([tools.get(c.id, c) if c.id else c for c in call.requested_tools]),
            latency_ms=duration_ms(call.span), token_count=call.token_count, cost_usd=call.cost_usd,
            tags=tags_of(lineage), metadata=meta,
            trace_id=trace.trace_id, span_id=call.span.span_id, scope="llm_call",
            model=call.response_model or call.request_model, request_model=call.request_model,
            provider=call.provider, system_prompt=call.system, input_tokens=call.prompt_tokens,
            output_tokens=call.completion_tokens, error=call.error, service_name=service_name(call.span))

    def _trace_case(self, trace: AssembledTrace, spans: list[SpanRecord], tree: _Tree,
                    calls: list[LLMCall], tools: dict[str, ToolCall], warnings: list[str]
                    ) -> EvalCase | NotEvaluable:
        frames = tree.frames(calls)
        error = any([c.error for c in calls])
        prompt = sum_known([c.prompt_tokens for c in calls])
        completion = sum_known([c.completion_tokens for c in calls])
        total = sum_known([c.token_count for c in calls])
        roots = [s for s in spans if is_root(s)]
        anchor = roots[0] if roots else (frames[0] if frames else calls[0].span)
        last = calls[-1]
        meta: dict[str, Any] = {"convention": _NAME, "llm_call_count": len(calls), **span_end(anchor),
                                **context_of([*frames, anchor], spans)}
        if agent := _agent_name(spans, frames, tree):
            meta["agent_name"] = agent
        return new_eval_case(
            input=_question(frames, calls), output=_answer(frames, calls), context=_documents(spans, tree, warnings),
            messages=last.messages, tool_calls=tuple(tools.values()),
            latency_ms=duration_ms(anchor) if len(roots) == 1 else extent_ms(spans), token_count=total,
            cost_usd=sum_known([c.cost_usd for c in calls]), tags=tags_of(spans), metadata=meta,
            trace_id=trace.trace_id, span_id=anchor.span_id,
            scope="trace", model=answered_model(last.response_model, last.request_model, last.error),
            request_model=last.request_model, provider=_provider(calls), system_prompt=_system_prompt(calls),
            input_tokens=prompt, output_tokens=completion, error=error, service_name=case_service_name(anchor, spans))


class _Tree:
    """Span kinds and ancestry of one trace (cycle-safe; a missing parent ends the chain)."""

    def __init__(self, spans: list[SpanRecord]) -> None:
        self.by_id = {s.span_id: s for s in spans}
        self.kinds = {s.span_id: k for s in spans if (k := oi.span_kind(s))}
        self._lineage: dict[str, list[SpanRecord]] = {}
        self._evaluated = oi.EVALUATOR in self.kinds.values()  # no EVALUATOR span (most traces): nothing is judged

    def kind(self, span: SpanRecord) -> str | None:
        return self.kinds.get(span.span_id)

    def lineage(self, span: SpanRecord) -> list[SpanRecord]:
        """The span and its ancestors present in the trace, nearest first."""
        if (cached := self._lineage.get(span.span_id)) is not None:
            return cached
        chain = self._lineage[span.span_id] = lineage(span, self.by_id)
        return chain

    def judged(self, span: SpanRecord) -> bool:
        """Under (or itself) an EVALUATOR span: an evaluation's own work, not the application's."""
        return self._evaluated and any(self.kind(a) == oi.EVALUATOR for a in self.lineage(span))

    def frames(self, calls: Sequence[LLMCall]) -> list[SpanRecord]:
        """Top-most CHAIN/AGENT spans that enclose at least one counted call, in start order."""
        tops: dict[str, SpanRecord] = {}
        for call in calls:
            chain = self.lineage(call.span)
            top: SpanRecord | None = None
            for i in range(1, len(chain)):  # the top-most enclosing frame: the last one along the chain
                if self.kind(chain[i]) in _FRAMES and not self.judged(chain[i]):
                    top = chain[i]
            if top is not None:
                tops.setdefault(top.span_id, top)
        found = list(tops.values())
        return sorted(found, key=lambda s: (s.start_time_unix_nano, s.span_id)) if len(found) > 1 else found


def _read_calls(llm_spans: Sequence[SpanRecord], tree: _Tree, warnings: list[str]) -> list[LLMCall]:
    """The innermost LLM spans, each completed from wrapping LLM spans that contain no other call; overlapping
    spans with the same provider response id are one call."""
    llm_ids = {s.span_id for s in llm_spans}
    outers = {s.span_id: [a for a in tree.lineage(s)[1:] if a.span_id in llm_ids] for s in llm_spans}
    wrapped = {a.span_id for chain in outers.values() for a in chain}
    leaves = [s for s in llm_spans if s.span_id not in wrapped]
    leaf_count: dict[str, int] = {}  # wrapping span -> leaves under it (a dict: collections.Counter is Python code)
    for s in leaves:
        for a in outers[s.span_id]:
            leaf_count[a.span_id] = leaf_count.get(a.span_id, 0) + 1
    calls: list[LLMCall] = []
    by_response: dict[str, list[int]] = {}  # provider response id -> indexes in calls
    for span in leaves:
        try:
            call = read_call(span)
            for outer in outers[span.span_id]:
                if leaf_count.get(outer.span_id, 0) == 1:
                    call = call.completed_from(read_call(outer))
            same = by_response.setdefault(call.response_id, []) if call.response_id else []
            twin = next((i for i in same if _overlap(calls[i], call)), None)
            if twin is None:
                same.append(len(calls))
                calls.append(call)
            else:  # a second instrumentation traced the same call outside the first one's span
                calls[twin] = calls[twin].completed_from(call)
        except Exception as err:
            warnings.append(f"span {span.span_id}: unreadable llm span ({type(err).__name__})")
    return calls


def _overlap(a: LLMCall, b: LLMCall) -> bool:
    return (a.span.start_time_unix_nano <= b.span.end_time_unix_nano
            and b.span.start_time_unix_nano <= a.span.end_time_unix_nano)


def _merge_tools(spans: Sequence[SpanRecord], tree: _Tree, calls: Sequence[LLMCall], warnings: list[str]
                 ) -> dict[str, ToolCall]:
    """Every tool call of the trace in order, merged by call id. Sources in span start order: a call's input
    (tool calls of the current turn, after the last user message; earlier turns only complete known ids; tool
    responses), its requested tool calls, and TOOL spans."""
    ledger = ToolLedger()
    by_span = {c.span.span_id: c for c in calls}
    for span in spans:
        try:
            if (call := by_span.get(span.span_id)) is not None:
                ledger.add_call(call.inputs, call.requested_tools)
            elif tree.kind(span) == oi.TOOL and not tree.judged(span):
                ledger.add_executed(tool_from_span(span))
        except Exception as err:
            warnings.append(f"span {span.span_id}: unreadable tool data ({type(err).__name__})")
    return ledger.calls


def _documents(spans: Sequence[SpanRecord], tree: _Tree, warnings: list[str]) -> tuple[Any, ...]:
    """Reranker outputs when a reranker ran (they are what reached the model), else every retriever's documents."""
    retrieved: list[Any] = []
    reranked: list[Any] = []
    for span in spans:
        kind = tree.kind(span)
        try:
            if kind == oi.RETRIEVER and not tree.judged(span):
                retrieved.extend(span_documents(span, oi.RETRIEVAL_DOCUMENTS))
            elif kind == oi.RERANKER and not tree.judged(span):
                reranked.extend(span_documents(span, oi.RERANKER_OUTPUT_DOCUMENTS))
        except Exception as err:
            warnings.append(f"span {span.span_id}: unreadable documents ({type(err).__name__})")
    return unique_documents(reranked or retrieved)


def _question(frames: list[SpanRecord], calls: list[LLMCall]) -> str | None:
    """The first frame's user text, else the first call's input."""
    for f in frames:
        if text := user_text(payload(f.attributes, "input")):
            return text
    for c in calls:
        if text := c.input_text:
            return text
    return None


def _answer(frames: list[SpanRecord], calls: list[LLMCall]) -> str | None:
    """The last frame's answer, else the last call's output."""
    for i in range(len(frames) - 1, -1, -1):
        if text := answer_text(payload(frames[i].attributes, "output")):
            return text
    for i in range(len(calls) - 1, -1, -1):
        if text := calls[i].output_text:
            return text
    return None


def _provider(calls: list[LLMCall]) -> str | None:
    for i in range(len(calls) - 1, -1, -1):
        if provider := calls[i].provider:
            return provider
    return None


def _system_prompt(calls: list[LLMCall]) -> str | None:
    for c in calls:
        if c.system:
            return c.system
    return None


def _agent_name(spans: list[SpanRecord], frames: list[SpanRecord], tree: _Tree) -> str | None:
    """``agent.name`` of the first span carrying one, else the first AGENT frame's span name."""
    if name := first_str(spans, oi.AGENT_NAME):
        return name
    for s in frames:
        if tree.kind(s) == oi.AGENT and s.name:
            return s.name
    return None


def _records_no_exchange(call: LLMCall) -> bool:
    """No user input, no output, no usage, no failure: a helper span of the framework, not a model call."""
    return (not call.outputs and not call.error and call.prompt_tokens is None and call.completion_tokens is None
            and call.total_tokens is None and call.input_text is None)
