"""OpenLLMetry (Traceloop) attribute names and per-span readers for the ``openllmetry`` mapper.

Reads (standards section 3): ``traceloop.span.kind`` / ``traceloop.entity.*`` / ``traceloop.workflow.name`` /
``traceloop.association.properties.*`` / ``traceloop.prompt.*`` (Traceloop SDK), ``llm.request.type``,
``llm.is_streaming`` / ``gen_ai.is_streaming``, ``llm.usage.total_tokens`` / ``gen_ai.usage.total_tokens``,
``llm.response.finish_reason``, the indexed ``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` forms
(including their quirks: ``gen_ai.prompt.{i}.user|system`` holding the text, un-indexed
``gen_ai.completion.role|content``, ``gen_ai.completion.{i}.function_call.*``), ``gen_ai.*`` usage and
``error.type`` / ``exception`` events. Every function is total: odd values give ``None`` or are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from evald import semconv as sc
from evald.frozen import replace
from evald.mapping.values import as_str, first_count, plain, str_list
from evald.model import STATUS_ERROR, SpanRecord

SPAN_KIND: Final = "traceloop.span.kind"
ENTITY_NAME: Final = "traceloop.entity.name"
ENTITY_INPUT: Final = "traceloop.entity.input"
ENTITY_OUTPUT: Final = "traceloop.entity.output"
WORKFLOW_NAME: Final = "traceloop.workflow.name"
ASSOCIATION_PREFIX: Final = "traceloop.association.properties."
PROMPT_KEY: Final = "traceloop.prompt.key"
PROMPT_VERSION: Final = "traceloop.prompt.version"
TOTAL_TOKEN_KEYS: Final = ("gen_ai.usage.total_tokens", "llm.usage.total_tokens")
STREAMING_KEYS: Final = ("gen_ai.is_streaming", "llm.is_streaming")
LEGACY_FINISH_REASON: Final = "llm.response.finish_reason"
KIND_WORKFLOW, KIND_TASK, KIND_AGENT, KIND_TOOL = "workflow", "task", "agent", "tool"

# keys only OpenLLMetry writes: the Traceloop SDK, the pre-0.54 ``llm.*`` names and their 0.54+ ``gen_ai.*`` renames
_MARKER_KEYS: Final = (sc.LLM_REQUEST_TYPE, "llm.is_streaming", "llm.usage.total_tokens", "llm.headers",
                       "gen_ai.is_streaming", "gen_ai.headers")
_TRACELOOP: Final = "traceloop."
_PROMPT_0: Final = "gen_ai.prompt.0."
_COMPLETION_0: Final = "gen_ai.completion.0."
_PROMPT_OR_COMPLETION: Final = "pc"  # the characters of _PROMPT_0 and _COMPLETION_0 after "gen_ai."
_NO_EVENTS: Final[frozenset[str]] = frozenset()
_ROLE_FIELDS: Final = frozenset({"user", "system", "assistant"})
# the first releases (semconv-ai < 0.1) used llm.* names for what later became gen_ai.*
_EARLY_PREFIXES: Final = ("llm.prompts.", "llm.completions.")
_EARLY_NAMES: Final = {"llm.vendor": sc.SYSTEM, "llm.request.model": sc.REQUEST_MODEL,
                       "llm.response.model": sc.RESPONSE_MODEL, "llm.usage.prompt_tokens": sc.USAGE_PROMPT_TOKENS,
                       "llm.usage.completion_tokens": sc.USAGE_COMPLETION_TOKENS}
_INDEXED: Final = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(user|system|assistant|function_call\.name"
                      r"|function_call\.arguments)$")
_INDEXED_TAILS: Final = frozenset({"user", "system", "assistant", "name", "arguments"})  # what _INDEXED ends with
_OPERATION_KINDS: Final = {sc.OP_INVOKE_AGENT: KIND_AGENT, sc.OP_INVOKE_WORKFLOW: KIND_WORKFLOW,
                           sc.OP_EXECUTE_TOOL: KIND_TOOL}
# OpenAI's plural/legacy values -> the OTel finish reason (0.54+ already writes ``tool_call``)
_FINISH_REASONS: Final = {"tool_calls": "tool_call", "function_call": "tool_call"}


def is_openllmetry_span(span: SpanRecord) -> bool:
    """True when the span carries an attribute only OpenLLMetry writes (cheap: it runs on every span the router
    sees)."""
    attrs = span.attributes
    for key in _MARKER_KEYS:  # six lookups (compiled, frozenset.isdisjoint(attrs) was a generic method call)
        if key in attrs:
            return True
    try:
        return _has_marker_prefix(attrs)
    except TypeError:  # a key that is not a str (compiled code checks each one): the careful pass
        keys: Iterable[object] = attrs
        return any(isinstance(key, str) and _has_marker_prefix((key,)) for key in keys)


def _has_marker_prefix(keys: Iterable[str]) -> bool:
    for key in keys:  # character tests skip most keys without a startswith call (~110 instructions each)
        initial = key[:1]
        if initial == "g":  # most GenAI keys: gen_ai.request.*, gen_ai.usage.* ... are neither prompt nor completion
            if key[7:8] in _PROMPT_OR_COMPLETION and (key.startswith(_PROMPT_0) or key.startswith(_COMPLETION_0)):
                return True
        elif initial == "t" and key.startswith(_TRACELOOP):
            return True
    return False


def span_kind(span: SpanRecord) -> str | None:
    """``traceloop.span.kind`` lower-cased, else the matching GenAI operation (agent/workflow/tool), else None."""
    attrs = plain(span.attributes)  # read as a dict: compiled, a direct C call per get
    kind = as_str(attrs.get(SPAN_KIND))
    if kind:
        return kind.strip().lower()
    op = as_str(attrs.get(sc.OPERATION_NAME))
    return _OPERATION_KINDS.get(op.strip().lower()) if op else None


def llm_operation(span: SpanRecord) -> str | None:
    """The GenAI operation of a span (``chat``, ``text_completion``, ``embeddings``, ``rerank`` ...) or None.

    ``gen_ai.operation.name`` (0.54+), ``llm.request.type`` (older), a ``gen_ai.system`` span with inference data,
    or (LlamaIndex-style task spans) indexed prompt *and* completion content without any of those.
    """
    attrs = span.attributes
    op = sc.operation_of(attrs, frozenset(e.name for e in span.events) if span.events else _NO_EVENTS)
    if op is not None:
        return op
    if as_str(attrs.get(SPAN_KIND)) in (KIND_TOOL, KIND_WORKFLOW, KIND_AGENT):
        return None
    has_prompt = has_completion = False
    for key in attrs:
        if isinstance(key, str):
            has_prompt = has_prompt or key.startswith(sc.PROMPT_PREFIX)
            has_completion = has_completion or key.startswith(sc.COMPLETION_PREFIX)
    return sc.OP_CHAT if has_prompt and has_completion else None


def normalized(span: SpanRecord) -> SpanRecord:
    """The span with legacy indexed quirks rewritten to the ``{i}.role`` / ``{i}.content`` form parse_indexed reads.

    The first releases' ``llm.prompts.{i}.*`` / ``llm.completions.{i}.*`` / ``llm.vendor`` / ``llm.request.model`` /
    ``llm.usage.prompt_tokens`` ... -> their ``gen_ai.*`` names (when the span also has ``llm.prompts.*``);
    ``gen_ai.prompt.0.user = "text"`` (completion-style prompts; Haystack writes a list) -> role user + content;
    un-indexed ``gen_ai.completion.role|content`` -> index 0; ``gen_ai.completion.{i}.function_call.name|arguments``
    -> ``tool_calls.0.*``. Returns the span unchanged (no copy) when none of these is present.
    """
    attrs = plain(span.attributes)
    source: dict[Any, Any] = attrs  # keys typed Any: compiled code checks no key's type (a non-str key is skipped)
    extra: dict[str, Any] = {}
    indexed: list[tuple[str, Any]] = []  # the gen_ai.prompt.* / gen_ai.completion.* items, found in one pass
    for key, value in source.items():
        # character tests first (as in _has_marker_prefix); no tuple argument: compiled, it is built for every key
        if not isinstance(key, str):
            continue
        initial = key[:1]
        if initial == "g":
            if key[7:8] in _PROMPT_OR_COMPLETION and (
                    key.startswith("gen_ai.prompt.") or key.startswith("gen_ai.completion.")):
                indexed.append((key, value))
        elif initial == "l" and (key.startswith("llm.prompts.") or key.startswith("llm.completions.")):
            attrs = _renamed_early(attrs)
            extra.update(attrs)
            indexed = [(k, v) for k, v in attrs.items() if isinstance(k, str) and (
                k.startswith("gen_ai.prompt.") or k.startswith("gen_ai.completion."))]
            break
    for key, value in indexed:
        if key in ("gen_ai.completion.role", "gen_ai.completion.content"):
            target = "gen_ai.completion.0." + key.rsplit(".", 1)[1]
            if target not in attrs:
                extra[target] = value
            continue
        if key.rpartition(".")[2] not in _INDEXED_TAILS:  # most keys (role, content, ...): no regex call
            continue
        match = _INDEXED.match(key)
        if match is None:
            continue
        kind, index, field = match.groups()
        base = f"gen_ai.{kind}.{index}."
        if field in _ROLE_FIELDS:
            if base + "content" not in attrs:
                if base + "role" not in attrs:
                    extra[base + "role"] = field
                extra[base + "content"] = _joined(value)
        elif base + "tool_calls.0.name" not in attrs:
            extra[base + "tool_calls.0." + field.split(".", 1)[1]] = value
    if not extra:
        return span
    return replace(span, attributes={**attrs, **extra})


def _renamed_early(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes with the pre-``gen_ai`` names of the first OpenLLMetry releases renamed (current names win)."""
    out = dict(attrs)
    for key, value in attrs.items():
        if not isinstance(key, str):
            continue
        new = _EARLY_NAMES.get(key)
        if new is None and key.startswith(_EARLY_PREFIXES):
            head, _, rest = key.partition(".")[2].partition(".")
            new = f"gen_ai.{'prompt' if head == 'prompts' else 'completion'}.{rest}" if rest else None
        if new is not None and new not in attrs:
            out[new] = value
    return out


def _joined(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return "\n".join(v for v in value if isinstance(v, str)) or None
    return value


def tokens(attrs: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) tokens. A missing part is derived from the total and the other part; the total
    is only kept as ``token_count`` when neither part is known (never added to its parts)."""
    tin = first_count(attrs, sc.INPUT_TOKEN_KEYS)
    tout = first_count(attrs, sc.OUTPUT_TOKEN_KEYS)
    total = first_count(attrs, TOTAL_TOKEN_KEYS)
    if total is not None:
        if tin is None and tout is not None and total >= tout:
            tin = total - tout
        elif tout is None and tin is not None and total >= tin:
            tout = total - tin
    return tin, tout, total


def finish_reasons(attrs: Mapping[str, Any], from_content: tuple[str, ...]) -> list[str]:
    """Finish reasons (``gen_ai.response.finish_reasons``, per-choice ``gen_ai.completion.{i}.finish_reason``,
    output-message parts, LlamaIndex ``llm.response.finish_reason``) normalised to the OTel values."""
    reasons = str_list(attrs.get(sc.RESPONSE_FINISH_REASONS)) or list(from_content)
    if not reasons:
        indexed = sorted((int(k.split(".")[2]), v) for k, v in attrs.items()
                         if isinstance(k, str) and k.startswith(sc.COMPLETION_PREFIX) and k.endswith(".finish_reason")
                         and k.split(".")[2].isdigit() and isinstance(v, str))
        reasons = [v for _, v in indexed] or str_list(attrs.get(LEGACY_FINISH_REASON))
    return [_FINISH_REASONS.get(r.strip().lower(), r.strip().lower()) for r in reasons if r.strip()]


def error_of(span: SpanRecord) -> str | None:
    """Why the span failed (``error.type``, else the ``exception`` event's type, else ``"error"`` for an ERROR
    status), or None when it did not."""
    kind = as_str(span.attributes.get(sc.ERROR_TYPE))
    if kind is None and span.status_code != STATUS_ERROR:
        return None
    if kind is None:
        event = next((e for e in span.events if e.name == "exception"), None)
        kind = as_str(event.attributes.get("exception.type")) if event is not None else None
    return _unquoted(kind) if kind else "error"


def _unquoted(text: str) -> str:
    """Some emitters record event attribute values as Python reprs (``"'openai.InternalServerError'"``)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def association_properties(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``traceloop.association.properties.<key>`` -> ``{key: value}`` (scalar values only)."""
    out: dict[str, Any] = {}
    data: dict[Any, Any] = plain(attrs)  # read as a dict; keys typed Any: compiled code checks no key's type
    for key, value in data.items():
        if (isinstance(key, str) and key.startswith(ASSOCIATION_PREFIX) and len(key) > len(ASSOCIATION_PREFIX)
                and isinstance(value, (str, int, float, bool))):
            out[key[len(ASSOCIATION_PREFIX):]] = value
    return out


def is_streaming(attrs: Mapping[str, Any]) -> bool | None:
    value = next((attrs[k] for k in STREAMING_KEYS if k in attrs), None)
    return value if isinstance(value, bool) else None
