"""The ``judges:`` config block: named judges (provider, model, key from the environment) and their limits."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.metrics.operational.cost import ModelPrice, find_price, shipped_prices
from evald.metrics.safety.detectors import PII_TYPES, Locale, PiiType, Regex


class CircuitBreakerConfig(ComponentConfig):
    failures: int = Field(5, ge=1, description="Consecutive failed calls that open the circuit.")
    reset_after: Duration = Field(
        30.0, gt=0, description="How long the circuit stays open before one trial call is let through."
    )


class RedactionConfig(ComponentConfig):
    enabled: bool = Field(True, description="Replace PII and secrets with typed placeholders before a prompt leaves.")
    pii: list[PiiType] = Field(list(PII_TYPES), description="PII types to replace (safety detectors).")
    locales: list[Locale] = Field(["us", "uk", "fr", "de", "it"], description="Locales for phones and national ids.")
    secrets: bool = Field(True, description="Replace API keys, tokens, JWTs, private keys and secret assignments.")
    min_entropy: float = Field(3.0, ge=0, description="Shannon entropy a generic `name = value` secret must reach.")
    patterns: dict[str, Regex] = Field(
        default_factory=dict,
        description="Extra regexes: {placeholder type: regex}; matches become `[TYPE_n]` (type upper-cased).",
    )


class JudgeConfig(ComponentConfig):
    provider: Literal["openai", "anthropic"] = Field(
        description="`openai` (also any OpenAI-compatible server via `base_url`) or `anthropic`."
    )
    model: str = Field(min_length=1, description="Model name sent to the provider; also the price-table key.")
    api_key: SecretStr | None = Field(
        None, description="Use `${env:VAR}`; never logged. Default: the SDK's own variable (OPENAI_API_KEY...)."
    )
    base_url: str | None = Field(None, description="Provider endpoint (OpenAI-compatible: include `/v1`).")
    temperature: float | None = Field(
        0.0, ge=0, le=2, description="Sampling temperature; None = the provider's default (not sent)."
    )
    max_output_tokens: int = Field(512, ge=16, description="Cap on the judge's answer (also bounds the cost).")
    timeout: Duration = Field(30.0, gt=0, description="Deadline of one call attempt.")
    max_retries: int = Field(2, ge=0, le=10, description="Retries of a call after a 429, 5xx, timeout or lost link.")
    retry_initial_interval: Duration = Field(
        0.5, gt=0, description="First retry backoff (doubles per retry, full jitter, capped at 10s)."
    )
    max_retry_after: Duration = Field(
        60.0, gt=0, description="A Retry-After longer than this ends the call (counted) instead of waiting."
    )
    max_concurrency: int = Field(8, ge=1, description="Calls in flight at once.")
    requests_per_minute: float | None = Field(None, gt=0, description="Token bucket on requests; None = no limit.")
    tokens_per_minute: float | None = Field(
        None, gt=0, description="Token bucket on (estimated) tokens per call; None = no limit."
    )
    daily_budget_usd: float | None = Field(
        None, gt=0, description="Hard spend limit per UTC day; a call that could exceed it is not made."
    )
    price: ModelPrice | None = Field(None, description="USD per 1M tokens; default: the shipped price table.")
    circuit_breaker: CircuitBreakerConfig = Field(CircuitBreakerConfig(), description="Fail fast after failures.")
    redaction: RedactionConfig = Field(RedactionConfig(), description="What is replaced before a prompt leaves.")

    @model_validator(mode="after")
    def _priced_when_budgeted(self) -> Self:
        if self.daily_budget_usd is not None and self.resolved_price() is None:
            raise ValueError(
                f"judge model {self.model!r} has no price in the shipped table: set `price` to use daily_budget_usd"
            )
        return self

    def resolved_price(self) -> ModelPrice | None:
        if self.price is not None:
            return self.price
        found = find_price(self.model, shipped_prices().models)
        return found[1] if found else None

