"""Vendor and framework span shapes rewritten as OpenTelemetry GenAI attributes before the GenAI mapper reads them.

:func:`normalize` returns the span unchanged (the same object, after one key-set check) unless it carries one of
these emitters' own keys; then it returns a copy whose attributes are completed with ``gen_ai.*`` equivalents
(attributes already on the span win) and whose events include the message events decoded from an ``events``-like
attribute. Sources: docs/conventions-vendors.md.

* pydantic-ai, instrumentation version 1: ``events`` on ``chat`` spans and ``all_messages_events`` on the agent
  run span (JSON arrays of ``{"event.name": "gen_ai.user.message", "role", "content", ...}`` / ``gen_ai.choice``
  ``{"index", "message"}`` dicts; items without ``event.name`` are named from their role); ``final_result``.
  Versions 2+: ``pydantic_ai.all_messages`` (parts-form history) and ``final_result`` on the agent span; tool spans
  with ``gen_ai.tool.name`` / ``gen_ai.tool.call.id`` and ``tool_arguments`` / ``tool_response`` but no operation
  (``running tool``, before version 3); ``agent_name``.
* logfire LLM spans (``instrument_openai`` / ``instrument_anthropic``, and the OpenAI Agents SDK integration):
  ``request_data`` (``messages`` / ``prompt`` / ``input``, ``model``, Anthropic ``system``) and ``response_data``
  (``message`` + ``usage``, ``combined_chunk_content`` of a stream, ``text`` of a completion); an ``events`` array
  with output events not marked as choices (the trailing assistant messages are the output).

An agent span of these emitters becomes ``invoke_agent``; a tool span without an operation ``execute_tool``; a
logfire request ``chat`` (``messages`` or an ``events`` array), ``text_completion`` (``prompt``) or
``embeddings`` (``input`` only). Langfuse spans: :mod:`evald.mapping.langfuse`. Pure; a span whose vendor data is
garbage is returned unchanged (never an exception).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evald import semconv as sc
from evald.frozen import replace
from evald.mapping import langfuse as lf
from evald.mapping.values import as_count, as_dict, as_list, as_str, as_text, is_mapping, parse_structured, plain
from evald.model import SpanEvent, SpanRecord

EVENTS: Final = "events"
ALL_MESSAGES_EVENTS: Final = "all_messages_events"
ALL_MESSAGES: Final = "pydantic_ai.all_messages"
FINAL_RESULT: Final = "final_result"
TOOL_ARGUMENTS: Final = "tool_arguments"
TOOL_RESPONSE: Final = "tool_response"
REQUEST_DATA: Final = "request_data"
RESPONSE_DATA: Final = "response_data"
#: usage an agent span aggregates over its model requests (pydantic-ai ``use_aggregated_usage_attribute_names``)
AGGREGATED_INPUT_TOKENS: Final = "gen_ai.aggregated_usage.input_tokens"
AGGREGATED_OUTPUT_TOKENS: Final = "gen_ai.aggregated_usage.output_tokens"

_AGENT_KEYS: Final = (ALL_MESSAGES, ALL_MESSAGES_EVENTS, FINAL_RESULT)
#: the keys of the shapes normalize() reads, as tuples: compiled, a loop of dict lookups (frozenset.isdisjoint(attrs)
#: is a generic method call that iterates every key of every span the GenAI mapper reads)
_LANGFUSE_KEY_LIST: Final = tuple(sorted(lf.KEYS))
_KEY_LIST: Final = (EVENTS, ALL_MESSAGES_EVENTS, ALL_MESSAGES, FINAL_RESULT, TOOL_ARGUMENTS, TOOL_RESPONSE,
                    REQUEST_DATA, *_LANGFUSE_KEY_LIST)
_ROLE_EVENTS: Final = {role: name for name, role in sc.INPUT_MESSAGE_EVENTS.items()}
_OUTPUT_ROLES: Final = frozenset({"assistant", "model"})


def is_candidate(span: SpanRecord) -> bool:
    """Whether the span carries a GenAI-specific key of these emitters (cheap: no value is parsed)."""
    attrs = span.attributes
    if sc.OPERATION_NAME not in attrs and _named_call(span) is not None:
        return True
    if lf.OBSERVATION_TYPE in attrs or ALL_MESSAGES in attrs or ALL_MESSAGES_EVENTS in attrs or sc.TOOL_NAME in attrs:
        return True
    if REQUEST_DATA not in attrs:
        return False
    tags = attrs.get("logfire.tags")
    return sc.SYSTEM in attrs or sc.PROVIDER_NAME in attrs or (isinstance(tags, (list, tuple)) and "LLM" in tags)


def normalize(span: SpanRecord) -> SpanRecord:
    """The span with vendor attributes completed as GenAI attributes (the same object when there are none)."""
    attrs = span.attributes
    try:
        if sc.OPERATION_NAME not in attrs and (named := _named_call(span)) is not None:
            operation, model = named
            return replace(span, attributes={sc.OPERATION_NAME: operation, sc.REQUEST_MODEL: model, **attrs})
        if not _has_any(attrs, _KEY_LIST) and not (sc.TOOL_NAME in attrs and sc.OPERATION_NAME not in attrs):
            return span
        extra: dict[str, Any] = {}
        events: list[SpanEvent] = []
        if _has_any(attrs, _LANGFUSE_KEY_LIST):
            extra.update(lf.semconv_attributes(span))
        else:
            _pydantic_ai(attrs, extra, events)
            if REQUEST_DATA in attrs and (RESPONSE_DATA in attrs or is_candidate(span)):
                _logfire_llm(attrs, extra)
        if not extra and not events:
            return span
        merged = {**extra, **attrs}
        return replace(span, attributes=merged, events=(*span.events, *events))
    except Exception:  # vendor data we cannot read: the span as it came
        return span


def _has_any(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    data = plain(attrs)  # read as a dict: compiled, a direct lookup per key (mypyc turns any() into a loop)
    return any(key in data for key in keys)


def _pydantic_ai(attrs: Mapping[str, Any], extra: dict[str, Any], events: list[SpanEvent]) -> None:
    if sc.TOOL_NAME in attrs:  # "running tool" spans (instrumentation versions 1 and 2)
        extra[sc.OPERATION_NAME] = sc.OP_EXECUTE_TOOL
        if TOOL_ARGUMENTS in attrs:
            extra[sc.TOOL_CALL_ARGUMENTS] = attrs[TOOL_ARGUMENTS]
        if TOOL_RESPONSE in attrs:
            extra[sc.TOOL_CALL_RESULT] = attrs[TOOL_RESPONSE]
    if any(k in attrs for k in _AGENT_KEYS):
        extra[sc.OPERATION_NAME] = sc.OP_INVOKE_AGENT
        if (name := as_str(attrs.get("agent_name"))) is not None:
            extra[sc.AGENT_NAME] = name
        if ALL_MESSAGES in attrs:
            extra[sc.INPUT_MESSAGES] = attrs[ALL_MESSAGES]
        elif ALL_MESSAGES_EVENTS in attrs:
            events.extend(message_events(attrs[ALL_MESSAGES_EVENTS]))
        final = attrs.get(FINAL_RESULT)
        text = final if isinstance(final, str) and final.strip() else None
        if text is None and final is not None and not isinstance(final, (str, bytes)):
            text = str(final)
        if text is not None:
            extra[sc.OUTPUT_MESSAGES] = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
    if EVENTS in attrs and sc.INPUT_MESSAGES not in attrs:
        events.extend(message_events(attrs[EVENTS]))


def message_events(raw: Any) -> list[SpanEvent]:
    """Span events from an ``events``-style array of event dicts. When no item is a ``gen_ai.choice``, the trailing
    assistant messages are the response and become choices."""
    items = as_list(raw)
    if not items:
        return []
    named: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        data = as_dict(item)
        if data is None:
            continue
        name = as_str(data.get("event.name"))
        if name is None:
            if "message" in data and ("index" in data or "finish_reason" in data):
                name = sc.EVENT_CHOICE
            else:
                name = _ROLE_EVENTS.get(as_str(data.get("role")) or "", "")
        if name in sc.INPUT_MESSAGE_EVENTS or name == sc.EVENT_CHOICE:
            named.append((name, data))
    if not any(name == sc.EVENT_CHOICE for name, _ in named):
        tail = len(named)
        while tail > 0 and named[tail - 1][1].get("role") in _OUTPUT_ROLES:
            tail -= 1
        if tail > 0:  # a response after some input; a history of assistant messages only stays input
            named[tail:] = [(sc.EVENT_CHOICE, {"index": i, "message": d}) for i, (_, d) in enumerate(named[tail:])]
    return [SpanEvent(name, 0, data) for name, data in named]


def _logfire_llm(attrs: Mapping[str, Any], extra: dict[str, Any]) -> None:
    if sc.INPUT_MESSAGES in attrs and (sc.OUTPUT_MESSAGES in attrs or RESPONSE_DATA not in attrs):
        return  # logfire 4.x+ writes the GenAI attributes itself
    request = as_dict(attrs.get(REQUEST_DATA)) or {}
    response = as_dict(attrs.get(RESPONSE_DATA))
    messages = as_list(request.get("messages"))
    if sc.OPERATION_NAME not in attrs:
        op = (sc.OP_CHAT if messages is not None or EVENTS in attrs or _response_messages(response)
              else sc.OP_TEXT_COMPLETION if "prompt" in request else sc.OP_EMBEDDINGS if "input" in request else None)
        if op is not None:
            extra[sc.OPERATION_NAME] = op
    if (model := as_str(request.get("model"))) is not None:
        extra[sc.REQUEST_MODEL] = model
    outputs = _response_messages(response)
    if messages is not None:
        if response is None:  # the output, when the emitter recorded it, follows the input (OpenAI Agents SDK)
            tail = len(messages)
            while tail > 0 and is_mapping(m := messages[tail - 1]) and m.get("role") in _OUTPUT_ROLES:
                tail -= 1
            if 0 < tail < len(messages):
                messages, outputs = messages[:tail], messages[tail:]
        extra[sc.INPUT_MESSAGES] = messages
    elif isinstance(prompt := parse_structured(request.get("prompt")), str | list):
        extra[sc.INPUT_MESSAGES] = [prompt] if isinstance(prompt, str) else prompt
    if request.get("system") is not None:  # Anthropic's top-level system prompt
        extra[sc.SYSTEM_INSTRUCTIONS] = request["system"]
    if outputs:
        extra[sc.OUTPUT_MESSAGES] = outputs
    usage = as_dict(response.get("usage")) if response is not None else None
    if usage is not None and not any(k in attrs for k in (*sc.INPUT_TOKEN_KEYS, *sc.OUTPUT_TOKEN_KEYS)):
        for key, names in ((sc.USAGE_INPUT_TOKENS, ("prompt_tokens", "input_tokens")),
                           (sc.USAGE_OUTPUT_TOKENS, ("completion_tokens", "output_tokens"))):
            if (count := next((n for k in names if (n := as_count(usage.get(k))) is not None), None)) is not None:
                extra[key] = count


def _response_messages(response: dict[str, Any] | None) -> list[Any]:
    if response is None:
        return []
    message = as_dict(response.get("message"))
    if message is not None:
        return [{"role": "assistant", **message}] if "role" not in message else [message]
    text = as_text(response.get("combined_chunk_content")) or as_text(response.get("text"))
    return [{"role": "assistant", "content": text}] if text else []


def agent_usage(attrs: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Usage an agent span reports for its whole run (``gen_ai.usage.*`` or pydantic-ai's aggregated names)."""
    tin = next((n for k in (AGGREGATED_INPUT_TOKENS, *sc.INPUT_TOKEN_KEYS)
                if (n := as_count(attrs.get(k))) is not None), None)
    tout = next((n for k in (AGGREGATED_OUTPUT_TOKENS, *sc.OUTPUT_TOKEN_KEYS)
                 if (n := as_count(attrs.get(k))) is not None), None)
    return tin, tout


def stream_opening(attrs: Mapping[str, Any], output: str | None, tokens: tuple[int | None, int | None],
                   error: bool) -> bool:
    """A logfire request span of a streamed call: it ends when the stream is returned, and its response is a
    separate ``streaming response from ...`` log record (its own trace unless the app wraps both in a span). It
    records no response (no id, usage, output or finish reason): not a model call of its own."""
    return (attrs.get("logfire.span_type") == "span" and "logfire.msg_template" in attrs and not error
            and output is None and tokens == (None, None) and sc.RESPONSE_ID not in attrs
            and sc.RESPONSE_FINISH_REASONS not in attrs)


#: instrumentations whose failed calls can carry nothing but the GenAI span name ``{operation} {model}``
_NAME_ONLY_SCOPES: Final = ("openlit.instrumentation.",)
_NAMED_OPERATIONS: Final = frozenset({sc.OP_CHAT, "text_completion", "generate_content"})


def _named_call(span: SpanRecord) -> tuple[str, str] | None:
    """OpenLIT's failed Anthropic call: a span named ``chat <model>`` with no attribute at all, only an ERROR status
    and an exception event; its operation and request model are read from the GenAI span name."""
    if not span.scope_name.startswith(_NAME_ONLY_SCOPES):
        return None
    operation, _, model = span.name.partition(" ")
    if operation not in _NAMED_OPERATIONS or not model or " " in model:
        return None
    return operation, model
