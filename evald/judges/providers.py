"""The two judge providers on their official SDKs, with the SDKs' own retries off (the limiter owns retries).

Structured output is provider-native when the verdict's JSON schema is given. ``openai``: ``AsyncOpenAI`` chat
completions with ``response_format`` ``json_schema`` (strict); a server that refuses it with HTTP 400 gets
``json_object`` instead, then and for the provider's lifetime (remembered, one extra request once); ``base_url``
makes it work with any OpenAI-compatible server (vLLM, Ollama, gateways). ``anthropic``: ``AsyncAnthropic``
messages with a forced tool (``verdict``, the schema as its ``input_schema``); the ``tool_use`` block's input
is the verdict, re-serialised as JSON in the order received (a plain text JSON answer is accepted too).
Both raise ``ProviderError`` with an outcome (``rate_limited``, ``server_error``, ``client_error``, ``timeout``,
``connection_error``, ``malformed``) and the server's ``Retry-After``; messages never carry the API key.
"""

from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from evald.judges.config import JudgeConfig

RETRYABLE_OUTCOMES = frozenset({"rate_limited", "server_error", "timeout", "connection_error"})


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


class _SchemaRefused(Exception):
    """The server answered 400 to a ``json_schema`` response format (it does not support it)."""


class ProviderError(RuntimeError):
    def __init__(self, outcome: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.outcome in RETRYABLE_OUTCOMES


class JudgeProvider(Protocol):
    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion: ...

    async def aclose(self) -> None: ...


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if present and sane."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed is not None else None


def _status_error(status: int, headers: httpx.Headers) -> ProviderError:
    if status == 429:
        return ProviderError("rate_limited", "HTTP 429 (rate limited)", retry_after_seconds(headers))
    if status >= 500 or status == 408:
        return ProviderError("server_error", f"HTTP {status}", retry_after_seconds(headers))
    return ProviderError("client_error", f"HTTP {status}")


class OpenAIProvider:
    def __init__(self, config: JudgeConfig) -> None:
        import openai

        self._openai = openai
        self._config = config
        self.json_schema_supported = True
        self._client = openai.AsyncOpenAI(
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            base_url=config.base_url, timeout=config.timeout, max_retries=0,
        )

    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion:
        if schema is not None and self.json_schema_supported:
            try:
                return await self._create(system, user, {
                    "type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": schema},
                })
            except _SchemaRefused:
                self.json_schema_supported = False
        return await self._create(system, user, {"type": "json_object"})

    async def _create(self, system: str, user: str, response_format: Any) -> Completion:
        cfg, errors = self._config, self._openai
        try:
            response = await self._client.chat.completions.create(
                model=cfg.model, max_tokens=cfg.max_output_tokens,
                temperature=cfg.temperature if cfg.temperature is not None else errors.NOT_GIVEN,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format=response_format,
            )
        except errors.BadRequestError:
            if response_format["type"] == "json_schema":
                raise _SchemaRefused from None
            raise ProviderError("client_error", "HTTP 400") from None
        except errors.APIStatusError as err:
            raise _status_error(err.status_code, err.response.headers) from None
        except errors.APITimeoutError:
            raise ProviderError("timeout", f"no answer within {cfg.timeout:g}s") from None
        except errors.APIConnectionError as err:
            raise ProviderError("connection_error", f"connection failed: {type(err.__cause__).__name__}") from None
        except (errors.APIResponseValidationError, ValueError) as err:
            raise ProviderError("malformed", f"unreadable response: {type(err).__name__}") from None
        choices: list[Any] = list(getattr(response, "choices", None) or [])
        usage = getattr(response, "usage", None)
        text = choices[0].message.content if choices and choices[0].message else None
        if not isinstance(text, str) or usage is None:
            raise ProviderError("malformed", "response without message content or usage")
        return Completion(text, int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))

    async def aclose(self) -> None:
        await self._client.close()


class AnthropicProvider:
    def __init__(self, config: JudgeConfig) -> None:
        import anthropic

        self._anthropic = anthropic
        self._config = config
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key.get_secret_value() if config.api_key else None,
            base_url=config.base_url, timeout=config.timeout, max_retries=0,
        )

    async def complete(self, system: str, user: str, schema: dict[str, Any] | None = None) -> Completion:
        cfg, errors = self._config, self._anthropic
        tools: Any = errors.NOT_GIVEN
        tool_choice: Any = errors.NOT_GIVEN
        if schema is not None:
            tools = [{"name": "verdict", "description": "Record your verdict.", "input_schema": schema}]
            tool_choice = {"type": "tool", "name": "verdict"}
        try:
            response = await self._client.messages.create(
                model=cfg.model, max_tokens=cfg.max_output_tokens, system=system,
                messages=[{"role": "user", "content": user}], tools=tools, tool_choice=tool_choice,
                # this SDK no longer types `temperature`; the Messages API still takes it
                extra_body={"temperature": cfg.temperature} if cfg.temperature is not None else None,
            )
        except errors.APIStatusError as err:
            raise _status_error(err.status_code, err.response.headers) from None
        except errors.APITimeoutError:
            raise ProviderError("timeout", f"no answer within {cfg.timeout:g}s") from None
        except errors.APIConnectionError as err:
            raise ProviderError("connection_error", f"connection failed: {type(err.__cause__).__name__}") from None
        except (errors.APIResponseValidationError, ValueError) as err:
            raise ProviderError("malformed", f"unreadable response: {type(err).__name__}") from None
        blocks: list[Any] = list(getattr(response, "content", None) or [])
        tool_inputs = [b.input for b in blocks if getattr(b, "type", None) == "tool_use" and b.name == "verdict"]
        if tool_inputs:
            text = json.dumps(tool_inputs[0], ensure_ascii=False)
        else:
            text = "".join(b.text for b in blocks if getattr(b, "type", None) == "text")
        usage = getattr(response, "usage", None)
        if usage is None:
            raise ProviderError("malformed", "response without usage")
        return Completion(text, int(usage.input_tokens or 0), int(usage.output_tokens or 0))

    async def aclose(self) -> None:
        await self._client.close()


def make_provider(config: JudgeConfig) -> JudgeProvider:
    if config.provider == "anthropic":
        return AnthropicProvider(config)
    return OpenAIProvider(config)
