"""The ``judges:`` config block: named judges (provider, model, key from the environment) and their limits.

Per judge: connection (``provider``, ``model``, ``api_key``, ``base_url``, ``temperature``, ``max_output_tokens``),
call limits (``timeout``, ``max_retries``, ``retry_initial_interval``, ``max_retry_after``, ``max_concurrency``,
``requests_per_minute``, ``tokens_per_minute``, ``circuit_breaker``), hard budgets (``budget.max_cost_usd`` and
``budget.max_tokens``, each ``{hour, day}`` in UTC windows; ``daily_budget_usd`` is a deprecated alias of
``budget.max_cost_usd.day``; ``price``), the verdict ``cache``, where text may go (``redaction``,
``allowed_base_urls``, ``never_send``), ``batch`` (evald/judges/batching.py) and ``coordination`` (share budgets,
rate limits, cache and circuit state across replicas through Redis: evald/judges/coordination/config.py). Refused at
load: a USD budget without a price for the model, both ``daily_budget_usd`` and a different
``budget.max_cost_usd.day``, an endpoint outside ``allowed_base_urls``, and (``check_judge_deadlines``, run with the
root config) a judge whose whole call can outlast ``pipeline.metric_timeout``: a call's deadline
(``call_deadline()``) is ``timeout`` x (``max_retries`` + 1) plus the longest backoff between attempts, and the
limiter ends every call by it, so the judge gives up, counts and settles before its metric does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.config.patterns import Regex
from evald.detection.detectors import PII_TYPES, Locale, PiiType
from evald.judges.batching import BatchConfig
from evald.judges.coordination.config import CoordinationConfig
from evald.outcomes import safe_url
from evald.pricing import ModelPrice, find_price, shipped_prices

#: the longest backoff between two attempts (full jitter below it)
MAX_BACKOFF = 10.0


class CircuitBreakerConfig(ComponentConfig):
    failures: int = Field(5, ge=1, description="Consecutive failed calls that open the circuit.")
    reset_after: Duration = Field(
        30.0, gt=0, description="How long the circuit stays open before one trial call is let through."
    )


class RedactionConfig(ComponentConfig):
    enabled: bool = Field(True, description="Replace PII and secrets with typed placeholders before a prompt leaves.")
    pii: list[PiiType] = Field(list(PII_TYPES), description="PII types to replace (safety detectors).")
    locales: list[Locale] = Field(["us", "uk", "fr", "de", "it"], description="Locales for phones and national ids.")
    secrets: bool = Field(
        True, description="Replace API keys, tokens, JWTs, private keys and secret assignments (detect-secrets' "
        "regex plugins plus evald's rules; docs/judges.md, Redaction)."
    )
    min_entropy: float = Field(3.0, ge=0, description="Shannon entropy a generic `name = value` secret must reach.")
    patterns: dict[str, Regex] = Field(
        default_factory=dict,
        description="Extra regexes: {placeholder type: regex}; matches become `[TYPE_n]` (type upper-cased).",
    )


class CostWindows(ComponentConfig):
    hour: float | None = Field(None, gt=0, description="USD per UTC hour; None = no hourly limit.")
    day: float | None = Field(None, gt=0, description="USD per UTC day; None = no daily limit.")


class TokenWindows(ComponentConfig):
    hour: int | None = Field(None, ge=1, description="Tokens (input + output) per UTC hour; None = no limit.")
    day: int | None = Field(None, ge=1, description="Tokens (input + output) per UTC day; None = no limit.")


class BudgetConfig(ComponentConfig):
    max_cost_usd: CostWindows = Field(
        CostWindows(), description="Hard spend limits; a call whose worst-case cost could pass one is not made."
    )
    max_tokens: TokenWindows = Field(
        TokenWindows(), description="Hard token limits; a call whose worst-case tokens could pass one is not made."
    )


class CacheConfig(ComponentConfig):
    enabled: bool = Field(True, description="Judge identical cases once (same metric, model, prompt, content).")
    max_entries: int = Field(10_000, ge=1, description="Verdicts kept; the least recently used goes first.")
    ttl: Duration = Field(3600.0, gt=0, description="How long a verdict is reused after it was made.")


class NeverSendConfig(ComponentConfig):
    service_names: list[str] = Field(
        default_factory=list,
        description="Cases of these services (`service.name`) are never sent: judged metrics skip them "
        "(reason `never_send`).",
    )


_DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


def _host_port(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url if "://" in url else f"//{url}")
    return (parts.hostname or "").lower(), parts.port


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
    timeout: Duration = Field(
        12.0, gt=0, description="Deadline of one call attempt. A whole call (every attempt and the backoffs "
        "between them) must end before `pipeline.metric_timeout` (checked at load)."
    )
    max_retries: int = Field(1, ge=0, le=10, description="Retries of a call after a 429, 5xx, timeout or lost link.")
    retry_initial_interval: Duration = Field(
        0.5, gt=0, description="First retry backoff (doubles per retry, full jitter, capped at 10s)."
    )
    max_retry_after: Duration = Field(
        60.0, gt=0, description="A Retry-After longer than this, or than what is left of the call's deadline, ends "
        "the call (counted) instead of waiting."
    )
    max_concurrency: int = Field(8, ge=1, description="Calls in flight at once.")
    requests_per_minute: float | None = Field(None, gt=0, description="Token bucket on requests; None = no limit.")
    tokens_per_minute: float | None = Field(
        None, gt=0, description="Token bucket on (estimated) tokens per call; None = no limit."
    )
    budget: BudgetConfig = Field(BudgetConfig(), description="Hard USD and token limits per UTC hour and day.")
    daily_budget_usd: float | None = Field(
        None, gt=0, description="Deprecated: alias of `budget.max_cost_usd.day` (setting both is an error)."
    )
    cache: CacheConfig = Field(CacheConfig(), description="Bounded LRU+TTL cache of verdicts.")
    allowed_base_urls: list[str] = Field(
        default_factory=list,
        description="When set, the judge's endpoint (`base_url`, or the provider's default) must have the host "
        "(and port, if given) of one of these URLs or hosts; otherwise the config is refused.",
    )
    never_send: NeverSendConfig = Field(NeverSendConfig(), description="Text that must never leave, per service.")
    price: ModelPrice | None = Field(None, description="USD per 1M tokens; default: the shipped price table.")
    circuit_breaker: CircuitBreakerConfig = Field(CircuitBreakerConfig(), description="Fail fast after failures.")
    redaction: RedactionConfig = Field(RedactionConfig(), description="What is replaced before a prompt leaves.")
    batch: BatchConfig = Field(
        BatchConfig(), description="Ask the judged metrics of one case in one call (docs/judges.md, Batched judging)."
    )
    coordination: CoordinationConfig | None = Field(
        None, description="Share budgets, rate limits, verdict cache and circuit state with every replica through "
        "Redis (docs/judges.md, Shared governance); None = per process."
    )

    @model_validator(mode="before")
    @classmethod
    def _daily_budget_alias(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("daily_budget_usd") is None:
            return data
        budget = dict(data.get("budget") or {})
        cost = dict(budget.get("max_cost_usd") or {})
        if cost.get("day") is not None and cost["day"] != data["daily_budget_usd"]:
            raise ValueError("set budget.max_cost_usd.day or its deprecated alias daily_budget_usd, not both")
        cost["day"] = data["daily_budget_usd"]
        return {**data, "budget": {**budget, "max_cost_usd": cost}}

    @model_validator(mode="after")
    def _check(self) -> Self:
        cost = self.budget.max_cost_usd
        if (cost.hour is not None or cost.day is not None) and self.resolved_price() is None:
            raise ValueError(
                f"judge model {self.model!r} has no price in the shipped table: set `price` to use "
                "budget.max_cost_usd"
            )
        if self.allowed_base_urls and not self.endpoint_allowed():
            raise ValueError(
                f"judge endpoint {safe_url(self.endpoint())!r} is not in allowed_base_urls "
                f"({', '.join(self.allowed_base_urls)})"
            )
        return self

    def backoff_cap(self, retry: int) -> float:
        """The longest backoff before retry number ``retry`` (0-based): full jitter below it."""
        return min(MAX_BACKOFF, self.retry_initial_interval * float(2**retry))

    def call_deadline(self) -> float:
        """Seconds a whole call may take, every attempt and backoff included; the limiter ends a call by then."""
        return self.timeout * (self.max_retries + 1) + sum(self.backoff_cap(k) for k in range(self.max_retries))

    def endpoint(self) -> str:
        """Where prompts go: ``base_url``, or the provider's public API."""
        return self.base_url or _DEFAULT_BASE_URLS[self.provider]

    def endpoint_allowed(self) -> bool:
        host, port = _host_port(self.endpoint())
        for entry in self.allowed_base_urls:
            allowed_host, allowed_port = _host_port(entry)
            if allowed_host == host and allowed_port in (None, port):
                return True
        return False

    def resolved_price(self) -> ModelPrice | None:
        if self.price is not None:
            return self.price
        found = find_price(self.model, shipped_prices().models)
        return found[1] if found else None



def check_judge_deadlines(judges: Mapping[str, JudgeConfig], metric_timeout: float) -> None:
    """Raise ``ValueError`` when a judge's call deadline is not shorter than ``pipeline.metric_timeout``: the
    metric would give up first, and the call's outcome and cost would be left to a task nobody waits for."""
    for name, judge in judges.items():
        deadline = judge.call_deadline()
        if deadline >= metric_timeout:
            backoff = deadline - judge.timeout * (judge.max_retries + 1)
            raise ValueError(
                f"judges.{name}: one call can take up to {deadline:g}s (judges.{name}.timeout {judge.timeout:g}s x "
                f"{judge.max_retries + 1} attempts (judges.{name}.max_retries {judge.max_retries}) + up to "
                f"{backoff:g}s of backoff), which is not shorter than pipeline.metric_timeout {metric_timeout:g}s: "
                f"lower judges.{name}.timeout or judges.{name}.max_retries, or raise pipeline.metric_timeout"
            )
