"""The inference calls of a GenAI-semconv trace, each underlying model request counted once.

Reads the inference spans the mapper found (``chat`` / ``text_completion`` / ``generate_content``) with their
resolved content (:class:`evald.mapping.messages.CallContent`) and attributes. When two instrumentations trace the
same request, :func:`dedupe_calls` keeps one call:

* **nested**: an inference span with another inference span below it (a framework's ``chat`` span around the
  provider client's span: pydantic-ai around logfire's or the official OpenAI instrumentation, the Anthropic SDK's
  own span inside a wrapper) is a wrapper, never a call; the innermost span is the call, completed from a wrapper
  around exactly that one call (its content, model, usage, response id when the inner span lacks them);
* **same response**: spans with the same ``gen_ai.response.id`` that are not nested count once (the most
  detailed is kept, completed from the others);
* **same request, two scopes**: siblings from different instrumentation scopes whose time ranges overlap, with the
  same request model and the same input, are one call (instrumentations that do not propagate context);
* **request plus recorded response**: an inference span without output, usage or response id followed by a
  sibling with the same request model and input that has them is the same call (logfire records a streamed
  response as a separate ``streaming response`` log span after the request span ended).

Pure; never raises on the data it is given (spans are already parsed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evald import semconv as sc
from evald.mapping.case_parts import call_texts
from evald.mapping.messages import CallContent
from evald.mapping.values import as_str, first_count
from evald.model import SpanRecord


class InferenceCall:
    """One inference span with its content resolved (derived texts computed once: cases read them often)."""

    __slots__ = ("span", "operation", "content", "attrs", "error", "input_text", "output_text", "requested_tools",
                 "messages", "tokens")

    def __init__(self, span: SpanRecord, operation: str, content: CallContent, attrs: dict[str, Any],
                 error: bool) -> None:
        self.span = span
        self.operation = operation
        self.content = content
        self.attrs = attrs  # span attributes, completed from its log records' payloads (and absorbed spans)
        self.error = error
        self.input_text, self.output_text, self.requested_tools, self.messages = call_texts(content)
        self.tokens: tuple[int | None, int | None] = tokens_of(attrs)

    def completed_from(self, other: InferenceCall) -> InferenceCall:
        """This call with what it lacks taken from ``other`` (a trace of the same request)."""
        mine, theirs = self.content, other.content
        content = CallContent(mine.input or theirs.input, mine.output or theirs.output, mine.system or theirs.system,
                              mine.finish_reasons or theirs.finish_reasons)
        mask: dict[str, Any] = {}
        if self.tokens != (None, None):  # usage is read from one span only, never half from each
            mask = {k: None for k in (*sc.INPUT_TOKEN_KEYS, *sc.OUTPUT_TOKEN_KEYS) if k not in self.attrs}
        attrs = {**other.attrs, **self.attrs, **mask}  # the first of mask, mine, theirs wins (ChainMap's key order)
        return InferenceCall(self.span, self.operation, content, attrs, self.error or other.error)

    @property
    def has_response(self) -> bool:
        return bool(self.content.output) or self.tokens != (None, None) or response_id_of(self) is not None

    @property
    def detail(self) -> tuple[int, int, int, int]:
        return (int(bool(self.output_text or self.requested_tools)), int(self.tokens != (None, None)),
                len(self.messages), len(self.attrs))


def response_id_of(call: InferenceCall) -> str | None:
    return as_str(call.attrs.get(sc.RESPONSE_ID))


def tokens_of(attrs: Mapping[str, Any]) -> tuple[int | None, int | None]:
    return first_count(attrs, sc.INPUT_TOKEN_KEYS), first_count(attrs, sc.OUTPUT_TOKEN_KEYS)


def dedupe_calls(calls: Sequence[InferenceCall], by_id: Mapping[str, SpanRecord]) -> list[InferenceCall]:
    """One call per underlying request, in the order of ``calls`` (span start order)."""
    if len(calls) < 2:
        return list(calls)
    kept = _innermost(calls, by_id)
    kept = _merge_same_response(kept)
    kept = _merge_same_request(kept)
    return kept


def _innermost(calls: Sequence[InferenceCall], by_id: Mapping[str, SpanRecord]) -> list[InferenceCall]:
    ids = {c.span.span_id: c for c in calls}
    nearest: dict[str, str] = {}  # call span -> the nearest call span above it
    for call in calls:
        seen = {call.span.span_id}
        parent = by_id.get(call.span.parent_span_id or "")
        while parent is not None and parent.span_id not in seen:
            if parent.span_id in ids:
                nearest[call.span.span_id] = parent.span_id
                break
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_span_id or "")
    if not nearest:
        return list(calls)
    wrappers = set(nearest.values())
    below: dict[str, list[str]] = {}  # wrapper -> the leaf calls under it
    for sid in ids:
        if sid in wrappers:
            continue
        up, seen = nearest.get(sid), set()
        while up is not None and up not in seen:
            seen.add(up)
            below.setdefault(up, []).append(sid)
            up = nearest.get(up)
    out: list[InferenceCall] = []
    for call in calls:
        sid = call.span.span_id
        if sid in wrappers:
            continue
        up, seen = nearest.get(sid), set()
        while up is not None and up not in seen and len(below.get(up, ())) == 1:  # wrappers of this call only
            seen.add(up)
            call = call.completed_from(ids[up])
            up = nearest.get(up)
        out.append(call)
    return out


def _merge_same_response(calls: list[InferenceCall]) -> list[InferenceCall]:
    groups: dict[str, list[int]] = {}
    for i, call in enumerate(calls):
        if (rid := response_id_of(call)) is not None:
            groups.setdefault(rid, []).append(i)
    return _merged(calls, [g for g in groups.values() if len(g) > 1])


def _merge_same_request(calls: list[InferenceCall]) -> list[InferenceCall]:
    groups: list[list[int]] = []
    taken: set[int] = set()
    for i, first in enumerate(calls):
        if i in taken or not first.input_text:
            continue
        group = [i]
        for j in range(i + 1, len(calls)):
            if j not in taken and _same_request(calls[group[0]], calls[j]):
                group.append(j)
        if len(group) > 1:
            taken.update(group)
            groups.append(group)
    return _merged(calls, groups)


def _same_request(a: InferenceCall, b: InferenceCall) -> bool:
    """``b`` (starting no earlier than ``a``) traces the request ``a`` traced."""
    if a.span.parent_span_id != b.span.parent_span_id or a.input_text != b.input_text:
        return False
    if len(a.content.input) != len(b.content.input):
        return False
    model_a, model_b = as_str(a.attrs.get(sc.REQUEST_MODEL)), as_str(b.attrs.get(sc.REQUEST_MODEL))
    if model_a != model_b or model_a is None:
        return False
    rid_a, rid_b = response_id_of(a), response_id_of(b)
    if rid_a is not None and rid_b is not None and rid_a != rid_b:
        return False
    if not a.has_response and not a.error and b.has_response:  # request span, then its recorded response
        return True
    overlap = a.span.start_time_unix_nano < b.span.end_time_unix_nano and \
        b.span.start_time_unix_nano < a.span.end_time_unix_nano
    return overlap and bool(a.span.scope_name) and bool(b.span.scope_name) and a.span.scope_name != b.span.scope_name


def _merged(calls: list[InferenceCall], groups: Sequence[Sequence[int]]) -> list[InferenceCall]:
    if not groups:
        return calls
    replace: dict[int, InferenceCall] = {}
    dropped: set[int] = set()
    for group in groups:
        best = max(group, key=lambda i: (*calls[i].detail, -i))
        merged = calls[best]
        for i in group:
            if i != best:
                merged = merged.completed_from(calls[i])
                dropped.add(i)
        replace[best] = merged
    return [replace.get(i, call) for i, call in enumerate(calls) if i not in dropped]
