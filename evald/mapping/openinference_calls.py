"""One OpenInference LLM span read into an :class:`LLMCall` (messages, models, tokens, error).

Reads: ``llm.input_messages.*`` / ``llm.output_messages.*`` (fallbacks: ``llm.prompts.*`` / ``llm.choices.*``,
the ``input.value`` request and ``output.value`` response payloads, ``llm.function_call``);
``llm.request.model_name`` / ``llm.response.model_name`` / ``llm.model_name`` / ``llm.invocation_parameters``;
``llm.provider`` (hosting provider, preferred) / ``llm.system``; ``llm.token_count.prompt|completion|total``;
``llm.finish_reason``; ``llm.cost.total|prompt|completion``; status ERROR or an ``exception`` event. A failed
call without output has no response model (``llm.model_name`` then holds the requested one). Total: bad data gives
empty fields, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from evald import semconv as sc
from evald.case import Message, ToolCall
from evald.mapping import openinference_fields as oi
from evald.mapping.messages import is_system_role, message_from_dict, text_of
from evald.mapping.openinference_payloads import messages_of, output_messages_of, payload, response_info, user_text
from evald.mapping.values import as_dict, as_str, is_mapping, plain, str_list
from evald.model import SpanRecord

_USER: Final = frozenset({"user"})
_ASSISTANT: Final = frozenset({"assistant"})
_MODEL_KEYS: Final = ("model", "model_name", "model_id", "modelId")


class LLMCall:
    """One LLM span read (never changed after construction). A plain class, not a frozen dataclass: compiled, its
    construction is a native call instead of a generated ``__init__`` that sets each of 14 fields through
    ``object.__setattr__`` (~22k instructions per call, about 2% of the mapping of the full mix)."""

    __slots__ = ("span", "inputs", "outputs", "system", "prompt_tokens", "completion_tokens", "total_tokens",
                 "request_model", "response_model", "provider", "response_id", "finish_reasons", "error", "cost_usd",
                 "_parameters", "_requested")

    def __init__(self, span: SpanRecord, inputs: tuple[Message, ...], outputs: tuple[Message, ...],
                 system: str | None, prompt_tokens: int | None, completion_tokens: int | None,
                 total_tokens: int | None, request_model: str | None, response_model: str | None,
                 provider: str | None, response_id: str | None, finish_reasons: tuple[str, ...], error: bool,
                 cost_usd: float | None = None, parameters: dict[str, Any] | None = None) -> None:
        self.span = span
        self.inputs = inputs
        self.outputs = outputs
        self.system = system
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.total_tokens = total_tokens
        self.request_model = request_model
        self.response_model = response_model
        self.provider = provider
        self.response_id = response_id
        self.finish_reasons = finish_reasons
        self.error = error
        self.cost_usd = cost_usd
        self._parameters = parameters  # the span's parsed invocation parameters, once read
        self._requested: tuple[ToolCall, ...] | None = None

    def parameters(self) -> dict[str, Any]:
        """The span's ``llm.invocation_parameters`` as a dict (``{}`` when absent or unreadable), parsed once."""
        if self._parameters is None:
            self._parameters = _parameters(self.span.attributes)
        return self._parameters

    @property
    def input_text(self) -> str | None:
        """The last user message (for RAG that is the prompt with the context pasted in)."""
        return text_of(self.inputs, _USER, last=True)

    @property
    def output_text(self) -> str | None:
        return text_of(self.outputs, _ASSISTANT) or text_of(self.outputs)

    @property
    def requested_tools(self) -> tuple[ToolCall, ...]:
        """The tool calls of the outputs (read by the tool merge and the call's case: collected once)."""
        if self._requested is None:
            self._requested = tuple([c for m in self.outputs for c in m.tool_calls])
        return self._requested

    @property
    def messages(self) -> tuple[Message, ...]:
        return (*self.inputs, *self.outputs)

    @property
    def token_count(self) -> int | None:
        prompt, completion = self.prompt_tokens, self.completion_tokens
        if prompt is None and completion is None:
            return self.total_tokens
        return (prompt or 0) + (completion or 0)  # the known ones (as sum() of them gives)

    def completed_from(self, outer: LLMCall) -> LLMCall:
        """Fill what this (inner) span lacks from a wrapping LLM span that traced the same single call."""
        have_tokens = any(n is not None for n in (self.prompt_tokens, self.completion_tokens, self.total_tokens))
        return LLMCall(
            span=self.span, inputs=self.inputs or outer.inputs, outputs=self.outputs if _usable(self.outputs) else (
                outer.outputs if _usable(outer.outputs) else self.outputs),
            system=self.system or outer.system,
            prompt_tokens=self.prompt_tokens if have_tokens else outer.prompt_tokens,
            completion_tokens=self.completion_tokens if have_tokens else outer.completion_tokens,
            total_tokens=self.total_tokens if have_tokens else outer.total_tokens,
            request_model=self.request_model or outer.request_model,
            response_model=self.response_model or outer.response_model, provider=self.provider or outer.provider,
            response_id=self.response_id or outer.response_id,
            finish_reasons=self.finish_reasons or outer.finish_reasons, error=self.error or outer.error,
            cost_usd=self.cost_usd if self.cost_usd is not None else outer.cost_usd, parameters=self._parameters)


def _usable(outputs: tuple[Message, ...]) -> bool:
    return any(m.content or m.tool_calls for m in outputs)


def read_call(span: SpanRecord) -> LLMCall:
    attrs = plain(span.attributes)
    error = oi.failed(span)
    raw: dict[str, Any] = {}

    def raw_in() -> Any:  # the request payload is parsed only when the attributes lack what it holds
        if "in" not in raw:
            raw["in"] = payload(attrs, "input")
        return raw["in"]

    inputs = oi.messages(attrs, oi.INPUT_MESSAGES, "user")
    if not text_of(inputs, _USER):  # none, or masked (OPENINFERENCE_HIDE_INPUT_TEXT keeps them without text)
        requested = messages_of(raw_in())
        if text_of(requested, _USER) or not inputs:  # input.value can still hold the request in clear
            inputs = requested
    if not inputs:
        prompts = oi.prompt_texts(attrs, oi.PROMPTS, "prompt") or _prompts(raw_in())
        if not prompts and (text := user_text(raw_in())):  # e.g. an OpenAI Responses request {"input": ...}
            prompts = [text]
        inputs = [Message("user", t) for t in prompts]
    outputs = oi.messages(attrs, oi.OUTPUT_MESSAGES, "assistant")
    raw_out = payload(attrs, "output")
    if not _usable(tuple(outputs)):
        fallback = [Message("assistant", t) for t in oi.prompt_texts(attrs, oi.CHOICES, "completion")]
        fallback = fallback or _function_call(attrs.get(oi.FUNCTION_CALL)) or output_messages_of(raw_out)
        outputs = fallback if _usable(tuple(fallback)) else outputs
    body_model, response_id = response_info(raw_out)
    produced = _usable(tuple(outputs))
    response_model = as_str(attrs.get(oi.RESPONSE_MODEL_NAME)) or body_model or (
        as_str(attrs.get(oi.MODEL_NAME)) if produced or not error else None)
    system = "\n".join(m.content for m in inputs if is_system_role(m.role) and m.content) or None
    prompt, completion, total = oi.tokens(attrs)
    params: dict[str, Any] | None = None  # parsed here only when the request model is not an attribute of its own
    request_model = as_str(attrs.get(oi.REQUEST_MODEL_NAME))
    if not request_model:
        params = _parameters(attrs)
        request_model = _request_model(attrs, params, raw_in)
    return LLMCall(
        span=span, inputs=tuple(inputs), outputs=tuple(outputs), system=system, prompt_tokens=prompt,
        completion_tokens=completion, total_tokens=total, request_model=request_model,
        response_model=response_model, provider=provider_of(attrs), response_id=response_id,
        finish_reasons=tuple(str_list(attrs.get(oi.FINISH_REASON))), error=error, cost_usd=oi.cost_usd(attrs),
        parameters=params)


def _prompts(raw_in: Any) -> list[str]:
    """A completions request: ``{"prompt": ...}`` / LangChain ``{"prompts": [...]}`` / plain text."""
    if is_mapping(raw_in):
        value = raw_in.get("prompts", raw_in.get("prompt"))
        values = value if isinstance(value, list) else [value]
        return [t for v in values[:1] if (t := user_text(v))]
    text = user_text(raw_in) if isinstance(raw_in, str) else None
    return [text] if text else []


def _function_call(value: Any) -> list[Message]:
    data = as_dict(value)
    if data is None or as_str(data.get("name")) is None:
        return []
    return message_from_dict({"role": "assistant", "tool_calls": [{"function": data}]}, "assistant")


def _parameters(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(plain(attrs).get(oi.INVOCATION_PARAMETERS)) or {}


def _request_model(attrs: dict[str, Any], params: dict[str, Any], raw_in: Callable[[], Any]) -> str | None:
    """(Without ``llm.request.model_name``:) the invocation parameters, the request body, LangChain's
    ``ls_model_name`` metadata, else ``llm.model_name`` (the best guess left)."""
    for key in _MODEL_KEYS:
        if model := as_str(params.get(key)):
            return model
    body = raw_in()
    if is_mapping(body) and (model := as_str(body.get("model"))):
        return model
    meta = as_dict(attrs.get(oi.METADATA)) or {}
    return as_str(meta.get("ls_model_name")) or as_str(attrs.get(oi.MODEL_NAME))


def provider_of(attrs: Mapping[str, Any]) -> str | None:
    """``llm.provider`` (who hosts the model), else ``llm.system`` (the AI product), in OTel's well-known names."""
    data = plain(attrs)
    return sc.normalize_provider(data.get(oi.PROVIDER)) or sc.normalize_provider(data.get(oi.SYSTEM))


def scalar_parameters(call: LLMCall) -> dict[str, Any]:
    """The scalar entries of the call's ``llm.invocation_parameters`` (tools, messages and other structures are left
    out)."""
    params = call.parameters()
    return {k: v for k, v in params.items() if isinstance(v, (str, int, float, bool)) and not k.startswith("_")}
