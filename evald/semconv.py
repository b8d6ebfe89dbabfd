"""OpenTelemetry GenAI semantic-convention names evald reads, and normalisation of their values.

Covers the current conventions (``gen_ai.provider.name``, ``gen_ai.input.messages`` ...) and the deprecated
forms still emitted by older instrumentations (``gen_ai.system``, per-message events, ``gen_ai.prompt``,
``gen_ai.usage.prompt_tokens``, OpenLLMetry's ``llm.request.type``). See docs: standards section 1.
Functions here are pure and never raise on unexpected values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# -- core -----------------------------------------------------------------------------------------------------
OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
SYSTEM: Final = "gen_ai.system"  # deprecated in v1.37, renamed to gen_ai.provider.name
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"  # seconds, streaming only
CONVERSATION_ID: Final = "gen_ai.conversation.id"
ERROR_TYPE: Final = "error.type"
LLM_REQUEST_TYPE: Final = "llm.request.type"  # OpenLLMetry <= 0.53, used when gen_ai.operation.name is absent

# -- usage ----------------------------------------------------------------------------------------------------
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"  # deprecated
USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"  # deprecated
INPUT_TOKEN_KEYS: Final = (USAGE_INPUT_TOKENS, USAGE_PROMPT_TOKENS)
OUTPUT_TOKEN_KEYS: Final = (USAGE_OUTPUT_TOKENS, USAGE_COMPLETION_TOKENS)

# -- content --------------------------------------------------------------------------------------------------
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
PROMPT: Final = "gen_ai.prompt"  # deprecated whole-prompt string (often Python-repr quoted)
COMPLETION: Final = "gen_ai.completion"  # deprecated whole-completion string
PROMPT_PREFIX: Final = "gen_ai.prompt."  # OpenLLMetry indexed form gen_ai.prompt.{i}.role|content|...
COMPLETION_PREFIX: Final = "gen_ai.completion."

# -- agents, tools, retrieval ---------------------------------------------------------------------------------
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
WORKFLOW_NAME: Final = "gen_ai.workflow.name"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
RETRIEVAL_QUERY_TEXT: Final = "gen_ai.retrieval.query.text"
RETRIEVAL_DOCUMENTS: Final = "gen_ai.retrieval.documents"

# -- events (span events or log records with event_name) -----------------------------------------------------
EVENT_INFERENCE_DETAILS: Final = "gen_ai.client.inference.operation.details"
EVENT_SYSTEM_MESSAGE: Final = "gen_ai.system.message"
EVENT_USER_MESSAGE: Final = "gen_ai.user.message"
EVENT_ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
EVENT_TOOL_MESSAGE: Final = "gen_ai.tool.message"
EVENT_CHOICE: Final = "gen_ai.choice"
EVENT_CONTENT_PROMPT: Final = "gen_ai.content.prompt"  # pre-1.28 span event carrying gen_ai.prompt
EVENT_CONTENT_COMPLETION: Final = "gen_ai.content.completion"  # pre-1.28 span event carrying gen_ai.completion
INPUT_MESSAGE_EVENTS: Final = {
    EVENT_SYSTEM_MESSAGE: "system",
    EVENT_USER_MESSAGE: "user",
    EVENT_ASSISTANT_MESSAGE: "assistant",
    EVENT_TOOL_MESSAGE: "tool",
}

# -- operations -----------------------------------------------------------------------------------------------
OP_CHAT: Final = "chat"
OP_TEXT_COMPLETION: Final = "text_completion"
OP_GENERATE_CONTENT: Final = "generate_content"
OP_EMBEDDINGS: Final = "embeddings"
OP_RETRIEVAL: Final = "retrieval"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
INFERENCE_OPERATIONS: Final = frozenset({OP_CHAT, OP_TEXT_COMPLETION, OP_GENERATE_CONTENT})
AGENT_OPERATIONS: Final = frozenset({OP_INVOKE_AGENT, OP_INVOKE_WORKFLOW})

# non-standard gen_ai.operation.name values seen in emitters, mapped to the well-known ones (logfire 4.x wrote
# "chat_completions" for OpenAI chat completions; OpenAI SDK method names such as "responses" / "completions")
_OPERATION_ALIASES: Final = {
    "chat_completions": OP_CHAT,
    "chat.completions": OP_CHAT,
    "chat_completion": OP_CHAT,
    "responses": OP_CHAT,
    "response": OP_CHAT,
    "messages": OP_CHAT,
    "completion": OP_TEXT_COMPLETION,
    "completions": OP_TEXT_COMPLETION,
    "embedding": OP_EMBEDDINGS,
    "execute_tools": OP_EXECUTE_TOOL,
}
_LLM_REQUEST_TYPES: Final = {
    "chat": OP_CHAT,
    "completion": OP_TEXT_COMPLETION,
    "embedding": OP_EMBEDDINGS,
    "embeddings": OP_EMBEDDINGS,
    "rerank": "rerank",
}
# span events that mark an inference span of a pre-operation-name emitter, next to gen_ai.system
_INFERENCE_EVENTS: Final = frozenset(
    {EVENT_CHOICE, EVENT_CONTENT_PROMPT, EVENT_CONTENT_COMPLETION, *INPUT_MESSAGE_EVENTS})
# keys whose presence next to gen_ai.system marks an inference span of a pre-operation-name emitter
_INFERENCE_HINTS: Final = (
    USAGE_INPUT_TOKENS, USAGE_OUTPUT_TOKENS, USAGE_PROMPT_TOKENS, USAGE_COMPLETION_TOKENS,
    PROMPT, COMPLETION, INPUT_MESSAGES, OUTPUT_MESSAGES, RESPONSE_MODEL, "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content", "gen_ai.completion.0.content", "gen_ai.completion.0.role",
)

# -- providers: deprecated gen_ai.system values (and OpenLLMetry's old capitalised ones) -> gen_ai.provider.name
_PROVIDER_ALIASES: Final = {
    "xai": "x_ai",
    "vertex_ai": "gcp.vertex_ai",
    "vertexai": "gcp.vertex_ai",
    "gemini": "gcp.gemini",
    "az.ai.inference": "azure.ai.inference",
    "az.ai.openai": "azure.ai.openai",
    "azure": "azure.ai.openai",
    "mistralai": "mistral_ai",
    "mistral": "mistral_ai",
    "aws": "aws.bedrock",
    "bedrock": "aws.bedrock",
    "watsonx": "ibm.watsonx.ai",
    "moonshot": "moonshot_ai",
}


def normalize_provider(value: Any) -> str | None:
    """Map a ``gen_ai.provider.name`` or deprecated ``gen_ai.system`` value to the current well-known name."""
    if not isinstance(value, str):
        return None
    key = value.strip().lower()
    if not key:
        return None
    return _PROVIDER_ALIASES.get(key, key)


def _as_dict(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` itself when it is a dict (what OTLP conversion gives), else a dict of its items: compiled,
    ``get`` and ``in`` on a dict-typed value are direct C calls (on a ``Mapping``, a method lookup and generic call).
    ``values.plain``'s twin: importing the mapping package here makes an import cycle mypyc cannot type."""
    return attributes if isinstance(attributes, dict) else dict(attributes)


def provider_of(attributes: Mapping[str, Any]) -> str | None:
    """``gen_ai.provider.name``, else the deprecated ``gen_ai.system``, normalised."""
    attrs = _as_dict(attributes)
    return normalize_provider(attrs.get(PROVIDER_NAME)) or normalize_provider(attrs.get(SYSTEM))


def operation_of(attributes: Mapping[str, Any], event_names: frozenset[str] = frozenset()) -> str | None:
    """The span's GenAI operation: ``gen_ai.operation.name`` (non-standard aliases such as ``chat_completions``
    normalised), else OpenLLMetry ``llm.request.type``, else ``chat`` for a ``gen_ai.system`` /
    ``gen_ai.provider.name`` span without an operation that carries inference data (tokens, prompt, messages)."""
    attrs = _as_dict(attributes)
    op = attrs.get(OPERATION_NAME)
    if isinstance(op, str) and op.strip():
        name = op.strip().lower()
        return _OPERATION_ALIASES.get(name, name)
    legacy = attrs.get(LLM_REQUEST_TYPE)
    if isinstance(legacy, str) and legacy.strip().lower() in _LLM_REQUEST_TYPES:
        return _LLM_REQUEST_TYPES[legacy.strip().lower()]
    if SYSTEM in attrs or PROVIDER_NAME in attrs:
        for key in _INFERENCE_HINTS:
            if key in attrs:
                return OP_CHAT
        if not event_names.isdisjoint(_INFERENCE_EVENTS):
            return OP_CHAT
    return None


def is_inference(operation: str | None) -> bool:
    return operation in INFERENCE_OPERATIONS
