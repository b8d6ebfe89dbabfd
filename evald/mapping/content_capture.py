"""Whether a case's content was recorded, and by which instrumentation: set on every case the router returns.

``case.metadata["content_capture"]`` is one of

* ``full``: the case has its input and its output (or, for a failed call, the input),
* ``partial``: one of them only,
* ``masked``: neither, and the trace carries a masking marker (``__REDACTED__``, ``[Scrubbed due to ...]``; see
  :mod:`evald.mapping.masking`): the emitter hid the content,
* ``none``: neither, and no marker: the emitter did not record content (most instrumentations' default).

``case.metadata["instrumentation"]`` is the id of the library that emitted the case's spans
(:mod:`evald.mapping.instrumentations`). Both feed ``evald_content_capture_cases_total`` and the WARN naming the
switch to set (evald/pipeline/content_diagnosis.py). A tool call whose name or id is a marker loses it (an empty
name, no id), and so does a message's role (``unknown``), name or call id. Pure and cheap: the marker scan runs only
for cases lacking content, once per trace.
"""

from __future__ import annotations

from typing import Any, Final

from evald.case import EvalCase, Message, ToolCall
from evald.frozen import replace
from evald.interfaces import MappingResult
from evald.mapping.instrumentations import detect
from evald.mapping.masking import is_masked, marker_in
from evald.mapping.values import plain
from evald.model import AssembledTrace

CONTENT_CAPTURE: Final = "content_capture"
INSTRUMENTATION: Final = "instrumentation"
MASK_MARKER: Final = "mask_marker"


def annotate(trace: AssembledTrace, result: MappingResult) -> MappingResult:
    """``result`` with each case's content-capture status and instrumentation in its metadata."""
    if not result.cases:
        return result
    scopes = _scopes(trace)
    distinct = _distinct(scopes)  # the trace's instrumentation scopes, once each
    marker: list[str | None] | None = None  # scanned lazily, once
    clean: set[int] = set()  # ids of the messages checked unmasked: a trace's cases share their messages
    cases: list[EvalCase] = []
    same = True  # every case the mapper's own object (its metadata completed in place): the result is unchanged
    for original in result.cases:
        case = original
        tool_calls, messages = case.tool_calls, case.messages  # each field read once (a generic attribute read)
        if tool_calls and any(_masked_call(t) for t in tool_calls):
            tool_calls = tuple(_unmasked(t) for t in tool_calls)
            case = replace(case, tool_calls=tool_calls)
        if messages and _any_masked(messages, clean):
            case = replace(case, messages=tuple(_unmasked_message(m) for m in messages))
        has_input = bool(case.input)
        has_any_output = bool(case.output)
        has_output = has_any_output or bool(tool_calls) or case.error
        if has_input and has_output:
            status, found = "full", None
        elif has_input or has_any_output:
            status, found = "partial", None
        else:
            if marker is None:
                marker = [_marker(trace)]
            found = marker[0]
            status = "masked" if found is not None else "none"
        span_scope = scopes.get(case.span_id or "", "")
        ordered = (span_scope, *distinct) if span_scope else distinct
        instrumentation = detect(ordered, _convention(case)).id
        case = _with(case, status, instrumentation, found)
        same = same and case is original
        cases.append(case)
    if same:
        return result
    return MappingResult(cases=tuple(cases), not_evaluable=result.not_evaluable, warnings=result.warnings)


def _any_masked(messages: tuple[Message, ...], clean: set[int]) -> bool:
    """Whether a message is masked (see ``_masked_message``); remembers the ids of those found clean."""
    for message in messages:
        key = id(message)
        if key in clean:
            continue
        if _masked_message(message):
            return True
        clean.add(key)
    return False


def _scopes(trace: AssembledTrace) -> dict[str, str]:
    out: dict[str, str] = {}
    for span in trace.spans:
        if name := span.scope_name:
            out[span.span_id] = name
    return out


def _distinct(scopes: dict[str, str]) -> tuple[str, ...]:
    """The scope names in first-seen order, once each (``tuple(dict.fromkeys(...))`` without its method call)."""
    seen: set[str] = set()
    out: list[str] = []
    for name in scopes.values():
        if name not in seen:
            seen.add(name)
            out.append(name)
    return tuple(out)


def _convention(case: EvalCase) -> str | None:
    meta = case.metadata
    if not meta:
        return None
    value = plain(meta).get("convention")  # compiled: a direct dict read (the mappers' metadata is a dict)
    return value if isinstance(value, str) else None


def _marker(trace: AssembledTrace) -> str | None:
    found = marker_in(s.attributes for s in trace.spans)
    if found is None and trace.logs:
        found = marker_in([*(log.attributes for log in trace.logs), *(log.body for log in trace.logs)])
    return found


def _with(case: EvalCase, status: str, instrumentation: str, marker: str | None) -> EvalCase:
    meta = case.metadata
    if type(meta) is dict:  # the mapper's own fresh dict, held by nobody else yet: complete it in place
        _complete(meta, status, instrumentation, marker)
        return case
    fresh: dict[str, Any] = dict(meta)
    _complete(fresh, status, instrumentation, marker)
    return replace(case, metadata=fresh)


def _complete(meta: dict[str, Any], status: str, instrumentation: str, marker: str | None) -> None:
    meta[CONTENT_CAPTURE] = status
    meta[INSTRUMENTATION] = instrumentation
    if marker is not None:
        meta[MASK_MARKER] = marker


def _masked_call(call: ToolCall) -> bool:
    if is_masked(call.name):
        return True
    call_id = call.id  # each field read once (compiled, a generic attribute read)
    return isinstance(call_id, str) and is_masked(call_id)


def _unmasked(call: ToolCall) -> ToolCall:
    """A tool call whose name or id is a masking marker (a Langfuse ``mask`` applied to every string): the marker is
    not recorded (an empty name, no id), so no metric takes ``REDACTED`` for the tool that was called."""
    if not _masked_call(call):
        return call
    return replace(call, name="" if is_masked(call.name) else call.name,
                   id=None if isinstance(call.id, str) and is_masked(call.id) else call.id)


def _masked_message(message: Message) -> bool:
    if is_masked(message.role):
        return True
    name, call_id = message.name, message.tool_call_id  # each field read once (compiled, a generic attribute read)
    return ((isinstance(name, str) and is_masked(name)) or (isinstance(call_id, str) and is_masked(call_id))
            or any(_masked_call(t) for t in message.tool_calls))


def _unmasked_message(message: Message) -> Message:
    """A message whose role, name or call ids are markers: role ``unknown``, the others not recorded."""
    if not _masked_message(message):
        return message
    return replace(message, role="unknown" if is_masked(message.role) else message.role,
                   name=None if isinstance(message.name, str) and is_masked(message.name) else message.name,
                   tool_call_id=None if isinstance(message.tool_call_id, str) and is_masked(message.tool_call_id)
                   else message.tool_call_id, tool_calls=tuple(_unmasked(t) for t in message.tool_calls))
