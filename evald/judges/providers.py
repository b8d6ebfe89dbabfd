"""The two judge providers on their official SDKs, with the SDKs' own retries off (the limiter owns retries).

Both send through the SDK's low-level request path, ``client.post(path, body=<dict>, cast_to=<its Response>)``:
the SDK still does auth, ``base_url`` handling, headers, timeouts and its typed errors (``APIStatusError``,
``APITimeoutError``, ``APIConnectionError``), but evald builds the body itself (the per-judge part once) and reads
the few response fields it needs with ``orjson``, skipping the SDK's per-call params transform and response models
(about half of the SDK's CPU per call; docs/benchmarks.md). One HTTP client per judge keeps at least
``max_concurrency`` connections alive between calls.

Structured output is provider-native when the verdict's JSON schema is given. ``openai``: chat completions with
``response_format`` ``json_schema`` (strict); a server that refuses it with HTTP 400 gets ``json_object``
instead, then and for the provider's lifetime (remembered, one extra request once); ``base_url`` makes it work
with any OpenAI-compatible server (vLLM, Ollama, gateways). ``anthropic``: messages with a forced tool
(``verdict``, the schema as its ``input_schema``); the ``tool_use`` block's input is the verdict, re-serialised as
JSON in the order received (a plain text JSON answer is accepted too).
Both raise ``ProviderError`` with an outcome (``rate_limited``, ``server_error``, ``client_error``, ``timeout``,
``connection_error``, ``malformed``) and the server's ``Retry-After``; messages never carry the API key. The usage
an answer reports is passed on raw (``Completion.input_tokens``/``output_tokens``, ``MISSING`` when absent), also
with a ``malformed`` answer (``ProviderError.usage``), for the limiter to judge (evald/judges/usage.py); a usage
that is absent or odd never makes an answer malformed. ``ProviderError.maybe_billed`` says whether the provider
may have billed a failed attempt (a timeout or a connection lost after connecting: yes; an HTTP error status or
a connection never made: no). A body that is not JSON for orjson (``NaN``, ``Infinity``) is read with the
standard library before it is called unreadable.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from evald.exporters.sending_policy import parse_retry_after
from evald.judges.config import JudgeConfig
from evald.judges.usage import MISSING

if TYPE_CHECKING:  # only annotations: importing httpx costs ~0.1 s of start-up (its CLI pulls pygments)
    import httpx

RETRYABLE_OUTCOMES = frozenset({"rate_limited", "server_error", "timeout", "connection_error"})
#: what ``httpx`` raises when no connection was made (nothing sent, nothing billed)
_NOT_CONNECTED = frozenset({"ConnectError", "ConnectTimeout"})
Usage = tuple[object, object]


@dataclass(frozen=True, slots=True)
class Completion:
    """An answer: its text and the usage it reported, raw (an int when the provider behaves; ``MISSING``)."""

    text: str
    input_tokens: object
    output_tokens: object


class _SchemaRefused(Exception):
    """The server answered 400 to a ``json_schema`` response format (it does not support it)."""


class ProviderError(RuntimeError):
    def __init__(
        self, outcome: str, message: str, retry_after: float | None = None, *, usage: Usage | None = None,
        maybe_billed: bool = False,
    ) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.retry_after = retry_after
        #: the usage an unusable answer reported (``(MISSING, MISSING)``: an answer that reported none)
        self.usage = usage
        #: the provider may have billed this attempt although it gave no usable answer
        self.maybe_billed = maybe_billed or usage is not None

    @property
    def retryable(self) -> bool:
        return self.outcome in RETRYABLE_OUTCOMES


class JudgeProvider(Protocol):
    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion: ...

    async def aclose(self) -> None: ...


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if present and sane (else None)."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def _status_error(status: int, headers: httpx.Headers) -> ProviderError:
    if status == 429:
        return ProviderError("rate_limited", "HTTP 429 (rate limited)", retry_after_seconds(headers))
    if status >= 500 or status == 408:
        return ProviderError("server_error", f"HTTP {status}", retry_after_seconds(headers))
    return ProviderError("client_error", f"HTTP {status}")


def http_library(sdk: Any) -> Any:
    """The HTTP library this SDK version is built on (``httpx``, or ``httpx2`` for openai 3 / anthropic 2)."""
    return importlib.import_module(type(sdk.DEFAULT_CONNECTION_LIMITS).__module__.partition(".")[0])


def _http_client(sdk: Any, max_concurrency: int) -> Any:
    """The SDK's own default async HTTP client, with keep-alive for at least ``max_concurrency`` connections."""
    default = sdk.DEFAULT_CONNECTION_LIMITS
    limits = type(default)(
        max_connections=max(default.max_connections or 0, max_concurrency),
        max_keepalive_connections=max(default.max_keepalive_connections or 0, max_concurrency),
    )
    return sdk.DefaultAsyncHttpxClient(limits=limits)


class _SdkProvider:
    """One SDK client per judge; ``_post`` is the call and its error classification shared by both providers."""

    def __init__(self, config: JudgeConfig, sdk: Any, client_class: Any) -> None:
        self._sdk = sdk
        self._config = config
        self._client = client_class(
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            base_url=config.base_url, timeout=config.timeout, max_retries=0,
            http_client=_http_client(sdk, config.max_concurrency),
        )
        self._raw_response = http_library(sdk).Response  # ``cast_to`` that makes the SDK return it undecoded

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        """The decoded JSON answer of a 2xx response; every failure as a ``ProviderError`` (``BadRequestError``
        passes through: the OpenAI provider decides what a 400 means)."""
        errors = self._sdk
        try:
            response = await self._client.post(path, body=body, cast_to=self._raw_response)
        except errors.BadRequestError:
            raise
        except errors.APIStatusError as err:
            raise _status_error(err.status_code, err.response.headers) from None
        except errors.APITimeoutError as err:
            connected = type(err.__cause__).__name__ not in _NOT_CONNECTED
            raise ProviderError(
                "timeout", f"no answer within {self._config.timeout:g}s", maybe_billed=connected
            ) from None
        except errors.APIConnectionError as err:
            cause = type(err.__cause__).__name__
            raise ProviderError(
                "connection_error", f"connection failed: {cause}", maybe_billed=cause not in _NOT_CONNECTED
            ) from None
        return _decode(response.content)

    async def aclose(self) -> None:
        await self._client.close()


def _decode(content: bytes) -> dict[str, Any]:
    """The JSON object of an answer; orjson first, the standard library for what orjson refuses (NaN, Infinity)."""
    try:
        answer = orjson.loads(content)
    except ValueError:
        try:
            answer = json.loads(content)
        except ValueError as err:
            raise _malformed(f"unreadable response: {type(err).__name__}") from None
    if not isinstance(answer, dict):
        raise _malformed("unreadable response: not a JSON object")
    return answer


def _malformed(detail: str, usage: Usage = (MISSING, MISSING)) -> ProviderError:
    return ProviderError("malformed", detail, usage=usage)


def _reported(answer: dict[str, Any], input_key: str, output_key: str) -> Usage:
    """The raw usage counts of an answer (``MISSING`` for each one absent)."""
    usage = answer.get("usage")
    if not isinstance(usage, dict):
        return MISSING, MISSING
    return usage.get(input_key, MISSING), usage.get(output_key, MISSING)


class OpenAIProvider(_SdkProvider):
    def __init__(self, config: JudgeConfig) -> None:
        import openai

        super().__init__(config, openai, openai.AsyncOpenAI)
        self.json_schema_supported = True
        self._fixed: dict[str, Any] = {"model": config.model, "max_tokens": config.max_output_tokens}
        if config.temperature is not None:
            self._fixed["temperature"] = config.temperature

    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion:
        if schema is not None and self.json_schema_supported:
            try:
                return await self._create(system, user, {
                    "type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": schema},
                })
            except _SchemaRefused:
                self.json_schema_supported = False
        return await self._create(system, user, {"type": "json_object"})

    async def _create(self, system: str, user: str, response_format: dict[str, Any]) -> Completion:
        body = {**self._fixed, "response_format": response_format,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        try:
            answer = await self._post("/chat/completions", body)
        except self._sdk.BadRequestError:
            if response_format["type"] == "json_schema":
                raise _SchemaRefused from None
            raise ProviderError("client_error", "HTTP 400") from None
        usage = _reported(answer, "prompt_tokens", "completion_tokens")
        try:
            text = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            raise _malformed("response without message content", usage)
        return Completion(text, *usage)


class AnthropicProvider(_SdkProvider):
    def __init__(self, config: JudgeConfig) -> None:
        import anthropic

        super().__init__(config, anthropic, anthropic.AsyncAnthropic)
        self._fixed: dict[str, Any] = {"model": config.model, "max_tokens": config.max_output_tokens}
        if config.temperature is not None:
            self._fixed["temperature"] = config.temperature

    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion:
        body = {**self._fixed, "system": system, "messages": [{"role": "user", "content": user}]}
        if schema is not None:
            body["tools"] = [{"name": "verdict", "description": "Record your verdict.", "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": "verdict"}
        try:
            answer = await self._post("/v1/messages", body)
        except self._sdk.BadRequestError:
            raise ProviderError("client_error", "HTTP 400") from None
        usage = _reported(answer, "input_tokens", "output_tokens")
        content = answer.get("content")
        if not isinstance(content, list):
            raise _malformed("response without content", usage)
        blocks = [b for b in content if isinstance(b, dict)]
        tool_inputs = [b.get("input") for b in blocks if b.get("type") == "tool_use" and b.get("name") == "verdict"]
        if tool_inputs:
            text = json.dumps(tool_inputs[0], ensure_ascii=False)
        else:
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        return Completion(text, *usage)


def make_provider(config: JudgeConfig) -> JudgeProvider:
    if config.provider == "anthropic":
        return AnthropicProvider(config)
    return OpenAIProvider(config)
