"""OpenInference attribute names and readers for its flattened lists (standards section 2).

OTLP attributes cannot hold objects, so OpenInference flattens lists as ``<prefix>.<i>.<path>``
(``llm.input_messages.0.message.role``). The same data may also arrive as one attribute holding an OTLP array or
kvlist (already ``list``/``dict`` here), a JSON string, or a mix; keys inside those may themselves be dotted
(``{"message.role": "user"}``) or nested (``{"message": {"role": "user"}}``). :func:`indexed` folds every form into
one list. Readers here: messages (``message.role|content|contents.{j}.message_content.*|tool_calls.{j}.tool_call.*|
tool_call_id|name|function_call_*``), documents (``document.id|content|score|metadata``), token counts, span kind
and error state. Indices are sorted numerically and never used to size a list (``.999999999.`` is harmless).
Every reader is total: malformed items are skipped, nothing raises on bad data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evald.case import Document, Message
from evald.mapping.case_parts import ID_KEYS, SCORE_KEYS
from evald.mapping.messages import message_from_dict
from evald.mapping.values import as_count, as_dict, as_float, as_str, as_text, is_mapping, parse_structured, plain
from evald.model import STATUS_ERROR, STATUS_OK, SpanRecord

SPAN_KIND: Final = "openinference.span.kind"
INPUT_VALUE: Final = "input.value"
INPUT_MIME_TYPE: Final = "input.mime_type"
OUTPUT_VALUE: Final = "output.value"
OUTPUT_MIME_TYPE: Final = "output.mime_type"
INPUT_MESSAGES: Final = "llm.input_messages"
OUTPUT_MESSAGES: Final = "llm.output_messages"
PROMPTS: Final = "llm.prompts"  # legacy completions API: llm.prompts.{i}.prompt.text
CHOICES: Final = "llm.choices"  # llm.choices.{i}.completion.text
FUNCTION_CALL: Final = "llm.function_call"  # legacy OpenAI function call, JSON {name, arguments}
MODEL_NAME: Final = "llm.model_name"
REQUEST_MODEL_NAME: Final = "llm.request.model_name"
RESPONSE_MODEL_NAME: Final = "llm.response.model_name"
PROVIDER: Final = "llm.provider"
SYSTEM: Final = "llm.system"
INVOCATION_PARAMETERS: Final = "llm.invocation_parameters"
FINISH_REASON: Final = "llm.finish_reason"
TOKENS_PROMPT: Final = "llm.token_count.prompt"
TOKENS_COMPLETION: Final = "llm.token_count.completion"
TOKENS_TOTAL: Final = "llm.token_count.total"
COST_TOTAL: Final = "llm.cost.total"
COST_PROMPT: Final = "llm.cost.prompt"
COST_COMPLETION: Final = "llm.cost.completion"
RETRIEVAL_DOCUMENTS: Final = "retrieval.documents"
RERANKER_OUTPUT_DOCUMENTS: Final = "reranker.output_documents"
TOOL_NAME: Final = "tool.name"
TOOL_DESCRIPTION: Final = "tool.description"
TOOL_PARAMETERS: Final = "tool.parameters"
TOOL_ID: Final = "tool.id"
TOOL_CALL_ID: Final = "tool_call.id"
TOOL_CALL_FUNCTION_NAME: Final = "tool_call.function.name"
TOOL_CALL_FUNCTION_ARGUMENTS: Final = "tool_call.function.arguments"
SESSION_ID: Final = "session.id"
USER_ID: Final = "user.id"
METADATA: Final = "metadata"
TAGS: Final = "tag.tags"
AGENT_NAME: Final = "agent.name"

LLM: Final = "LLM"
CHAIN: Final = "CHAIN"
AGENT: Final = "AGENT"
TOOL: Final = "TOOL"
RETRIEVER: Final = "RETRIEVER"
RERANKER: Final = "RERANKER"
EMBEDDING: Final = "EMBEDDING"
EVALUATOR: Final = "EVALUATOR"

_KINDS: Final = frozenset({LLM, CHAIN, AGENT, TOOL, RETRIEVER, RERANKER, EMBEDDING, EVALUATOR, "GUARDRAIL", "UNKNOWN"})
_ROLE_ALIASES: Final = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}
_ROLES: Final = {**{r: r for r in ("user", "assistant", "system", "tool", "developer", "function")}, **_ROLE_ALIASES}
_TEXT_CONTENT_TYPES: Final = frozenset({"text", "input_text", "output_text"})
_PATHS: Final[dict[str, dict[str, tuple[str, ...]]]] = {}  # prefix -> flattened key -> its path after the prefix
_MAX_PATHS: Final = 512  # keys per prefix (the full mix has 42 in all; at most ~1.6 MB per prefix, measured)
_MAX_PREFIXES: Final = 16  # the callers pass 6 constants
_MAX_KEY: Final = 160  # longer keys are split each time (the memo holds what it keeps alive)
_SMALL_INDEXES: Final = {str(i): i for i in range(64)}


def span_kind(span: SpanRecord) -> str | None:
    """``openinference.span.kind`` upper-cased, or ``None`` (also for a hostile attributes mapping)."""
    try:
        kind = plain(span.attributes).get(SPAN_KIND)
    except Exception:
        return None
    if type(kind) is str and kind in _KINDS:  # already upper-case and stripped (every instrumentation): as is
        return kind
    if isinstance(kind, str) and (key := kind.strip().upper()):
        return key
    return None


def failed(span: SpanRecord) -> bool:
    """Status ERROR, or an ``exception`` event on a span whose status was not explicitly set to OK."""
    if span.status_code == STATUS_ERROR:
        return True
    return span.status_code != STATUS_OK and any(e.name == "exception" for e in span.events)


def normalize_role(role: Any) -> str | None:
    if type(role) is str and (known := _ROLES.get(role)) is not None:  # the usual exact names: one lookup
        return known
    text = as_str(role)
    if text is None:
        return None
    key = text.strip().lower()
    return _ROLE_ALIASES.get(key, key)


def indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list ``prefix.{i}.*`` (and/or ``attrs[prefix]`` as array, kvlist or JSON), each
    one a nested dict, in index order. Non-dict items are dropped."""
    attrs = plain(attributes)
    root: dict[str, Any] = {}
    base = parse_structured(attrs.get(prefix))
    if isinstance(base, list):
        root.update({str(i): _expand(v) for i, v in enumerate(base)})
    elif is_mapping(base):
        root.update(_expand(base))
    dot = prefix + "."
    paths: dict[str, tuple[str, ...]] | None = None
    for key, value in attrs.items():
        if isinstance(key, str) and key.startswith(dot):
            if type(key) is not str or len(key) > _MAX_KEY:  # a str subclass (its own comparison), a long key: no memo
                _insert(root, tuple(key[len(dot):].split(".")), value)
                continue
            if paths is None:
                paths = _path_memo(prefix)
            path = paths.get(key)
            if path is None:
                path = paths[key] = tuple(key[len(dot):].split("."))
            _insert(root, path, value)
    out: list[dict[str, Any]] = []
    for item in items(root):
        if isinstance(item, str):  # one item as a JSON string (``llm.input_messages.0 = '{"message.role": ...}'``)
            item = _expand(parse_structured(item))
        if isinstance(item, dict):
            out.append(item)
    return out


def _path_memo(prefix: str) -> dict[str, tuple[str, ...]]:
    """The memo of split keys under ``prefix`` (tuples: shared by every caller, never mutated). Instrumentations
    repeat the same keys in every span (``llm.input_messages.0.message.role``): a hit costs a lookup with the key's
    cached hash instead of a slice, a split and three new strings whose hashes the nested dicts compute again.
    Bounded: cleared when full."""
    memo = _PATHS.get(prefix)
    if memo is None or len(memo) >= _MAX_PATHS:
        if len(_PATHS) >= _MAX_PREFIXES:
            _PATHS.clear()
        memo = _PATHS[prefix] = {}
    return memo


def items(node: Any) -> list[Any]:
    """A list node, or the digit-keyed entries of a dict node in numeric order; anything else gives ``[]``."""
    if node is None:  # an absent field (most messages have no tool_calls / contents)
        return []
    node = parse_structured(node)
    if isinstance(node, list):
        return node
    if is_mapping(node):
        keyed = [(_number(k), v) for k, v in plain(node).items() if isinstance(k, str) and k.isdigit()]
        for i in range(1, len(keyed)):  # sorted only when out of order (flattened keys mostly arrive in order)
            if keyed[i - 1][0] > keyed[i][0]:
                keyed.sort(key=_index)
                break
        return [v for _, v in keyed]
    return []


def _number(key: str) -> int:
    """``int(key)`` of a digit string; the small indexes every list starts with are looked up (int() parses)."""
    number = _SMALL_INDEXES.get(key)
    return int(key) if number is None else number


def _index(item: tuple[int, Any]) -> int:
    return item[0]


def _expand(value: Any, depth: int = 0) -> Any:
    """Nested plain data with dotted dict keys split into nested dicts (``{"a.b": 1}`` -> ``{"a": {"b": 1}}``)."""
    if depth > 32:
        return None
    if is_mapping(value):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            _insert(out, tuple(str(key).split(".")), _expand(inner, depth + 1))
        return out
    if isinstance(value, (list, tuple)):
        return [_expand(v, depth + 1) for v in value]
    return value


def _insert(node: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for i in range(len(path) - 1):
        step = path[i]
        child = node.get(step)
        if isinstance(child, list):  # an array form meeting flattened keys: index it
            child = node[step] = {str(j): v for j, v in enumerate(child)}
        elif not isinstance(child, dict):
            if child is not None:
                return  # a leaf already sits here; keep it
            child = node[step] = {}
        node = child
        if i > 64:
            return
    last = path[-1]
    old = node.get(last)
    if isinstance(old, dict) and isinstance(value, dict):
        for key, inner in value.items():
            _insert(old, (key,), inner)
    elif old is None:
        node[last] = value


def _inner(item: dict[str, Any], key: str) -> dict[str, Any]:
    """``item[key]`` when it is a dict (``{"message": {...}}``), else the item itself (already unwrapped)."""
    inner = item.get(key)
    return inner if isinstance(inner, dict) else item


def messages(attrs: Mapping[str, Any], prefix: str, default_role: str) -> list[Message]:
    """``llm.input_messages`` / ``llm.output_messages`` as evald messages (tool responses keep their call id)."""
    out: list[Message] = []
    for item in indexed(attrs, prefix):
        message = _inner(item, "message")
        raw = message.get("content")
        text = as_text(raw)
        texts = [text] if text else []
        for part in items(message.get("contents")) if not texts else ():  # both forms present: the same text
            content = _inner(part, "message_content") if isinstance(part, dict) else {}
            kind = as_str(content.get("type"))
            if (kind is None or kind in _TEXT_CONTENT_TYPES) and (text := as_text(content.get("text"))):
                texts.append(text)
        calls = [call for c in items(message.get("tool_calls"))
                 if isinstance(c, dict) and (call := _tool_call_dict(_inner(c, "tool_call")))]
        if (fname := as_str(message.get("function_call_name"))) is not None:
            calls.append({"function": {"name": fname, "arguments": message.get("function_call_arguments_json")}})
        data = {"role": normalize_role(message.get("role")) or default_role,
                "content": "\n".join(texts) if texts else raw if isinstance(raw, (list, dict)) else None,
                "tool_calls": calls,
                "tool_call_id": message.get("tool_call_id"), "name": message.get("name")}
        out.extend(message_from_dict(data, default_role))
    return out


def _tool_call_dict(call: dict[str, Any]) -> dict[str, Any] | None:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
    if name is None and arguments is None and call_id is None:
        return None
    return {"id": call_id, "function": {"name": name, "arguments": arguments}}


def prompt_texts(attrs: Mapping[str, Any], prefix: str, key: str) -> list[str]:
    """Legacy completions: ``llm.prompts.{i}.prompt.text`` / ``llm.choices.{i}.completion.text`` (or plain strings
    in an array form)."""
    out: list[str] = []
    base = parse_structured(plain(attrs).get(prefix))
    if isinstance(base, list) and all(isinstance(v, str) for v in base):
        return [t for v in base if (t := as_text(v))]
    for item in indexed(attrs, prefix):
        if text := as_text(_inner(item, key).get("text")):
            out.append(text)
    return out


def documents(attrs: Mapping[str, Any], prefix: str) -> list[Document]:
    """``retrieval.documents`` / ``reranker.output_documents`` items. A missing id or score is taken from the
    document metadata when a retriever put it there."""
    return [document_from(_inner(item, "document")) for item in indexed(attrs, prefix)]


def document_from(data: Mapping[str, Any]) -> Document:
    metadata = as_dict(data.get("metadata"))
    meta = metadata or {}
    content = next((t for k in ("content", "page_content", "text") if (t := as_text(data.get(k)))), None)
    doc_id = as_str(data.get("id")) or next((i for k in ID_KEYS if (i := as_str(meta.get(k)))), None)
    score = as_float(data.get("score"))
    if score is None:
        score = next((s for k in SCORE_KEYS if (s := as_float(meta.get(k))) is not None), None)
    return Document(id=doc_id, content=content, score=score, metadata=metadata)


def tokens(attrs: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(prompt, completion, total). ``*_details.*`` counts are parts of these and are never added."""
    data = plain(attrs)
    return (as_count(data.get(TOKENS_PROMPT)), as_count(data.get(TOKENS_COMPLETION)),
            as_count(data.get(TOKENS_TOTAL)))


def cost_usd(attrs: Mapping[str, Any]) -> float | None:
    """``llm.cost.total``, else ``llm.cost.prompt`` + ``llm.cost.completion`` (USD; negative values ignored)."""
    data = plain(attrs)
    total = as_float(data.get(COST_TOTAL))
    if total is not None:
        return total if total >= 0 else None
    parts = [c for k in (COST_PROMPT, COST_COMPLETION) if (c := as_float(data.get(k))) is not None and c >= 0]
    return sum(parts) if parts else None


def tags(attrs: Mapping[str, Any]) -> list[str]:
    value = parse_structured(plain(attrs).get(TAGS))
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [t for t in value if isinstance(t, str) and t.strip()] if isinstance(value, list) else []
