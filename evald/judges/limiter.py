"""The one limiter every judge call goes through (architecture guide rules 9 and 10).

Order for one call: daily budget (the call's worst-case cost is reserved; if it could pass the limit the call is
not made, counted ``budget_exhausted``) -> circuit breaker (open: fail fast, counted ``circuit_open``) ->
concurrency semaphore -> per attempt: requests- and tokens-per-minute buckets, then the provider call under an
``asyncio.timeout``; the answer is parsed (unparseable: counted ``malformed``, never retried).
Retryable failures (429, 5xx, timeout, lost connection) are retried up to ``max_retries``
times with full-jitter exponential backoff, waiting at least the server's ``Retry-After`` (a longer wait than
``max_retry_after`` ends the call). Every attempt is counted by outcome; the billed cost settles the budget.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from evald.judges.config import JudgeConfig
from evald.judges.governors import CircuitBreaker, Clock, DailyBudget, TokenBucket
from evald.judges.providers import Completion, ProviderError
from evald.judges.telemetry import CIRCUIT_HALF_OPEN, JudgeTelemetry
from evald.metrics.remote import MetricUnavailable, short_detail

logger = logging.getLogger(__name__)
T = TypeVar("T")
_MAX_BACKOFF = 10.0
_TOKENS_PER_UNIT = 1_000_000
#: tokens added to the byte count of a prompt for message framing in the worst-case estimate
_FRAMING_TOKENS = 32


class JudgeError(MetricUnavailable):
    """A judge call that produced no verdict; ``outcome`` is the counted reason (e.g. ``budget_exhausted``)."""

    def __init__(self, judge: str, outcome: str, detail: str) -> None:
        super().__init__(f"judge {judge!r}: {outcome}: {detail}")
        self.outcome = outcome


def worst_case_tokens(prompt: str) -> int:
    """An upper bound of a prompt's input tokens: byte-level BPE tokens are at least one UTF-8 byte each."""
    return len(prompt.encode("utf-8")) + _FRAMING_TOKENS


class JudgeLimiter:
    def __init__(
        self, name: str, config: JudgeConfig, telemetry: JudgeTelemetry, *, clock: Clock = time.monotonic,
        wall_clock: Clock = time.time, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.name = name
        self.config = config
        self._tm = telemetry
        self._sleep = sleep
        self._semaphore = asyncio.Semaphore(config.max_concurrency)
        self._rpm = TokenBucket(config.requests_per_minute, clock) if config.requests_per_minute else None
        self._tpm = TokenBucket(config.tokens_per_minute, clock) if config.tokens_per_minute else None
        breaker = config.circuit_breaker
        self.breaker = CircuitBreaker(breaker.failures, breaker.reset_after, clock)
        self.budget = DailyBudget(config.daily_budget_usd, wall_clock) if config.daily_budget_usd else None
        self._price = config.resolved_price()
        self._update_gauges()

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        if self._price is None:
            return 0.0
        return (input_tokens * self._price.input + output_tokens * self._price.output) / _TOKENS_PER_UNIT

    def worst_case_cost(self, prompt: str) -> float:
        return self.cost_usd(worst_case_tokens(prompt), self.config.max_output_tokens)

    async def call(self, prompt: str, send: Callable[[], Awaitable[Completion]], parse: Callable[[str], T]) -> T:
        """Run ``send`` (one provider request for ``prompt``, the whole text sent) under every limit, then
        ``parse`` its text; a ``ValueError`` from ``parse`` is a counted ``malformed`` outcome (not retried)."""
        reserved = self.worst_case_cost(prompt) if self.budget else 0.0
        if self.budget and not self.budget.try_reserve(reserved):
            self._refuse("budget_exhausted", f"daily budget ${self.budget.limit:g} would be exceeded; call not made")
        if not self.breaker.allow():
            if self.budget:
                self.budget.settle(reserved, 0.0)
            self._refuse("circuit_open", "circuit open after repeated failures; calls fail fast")
        is_trial = self.breaker.state == CIRCUIT_HALF_OPEN
        billed = 0.0
        try:
            async with self._semaphore:
                completion = await self._attempts(send, worst_case_tokens(prompt) + self.config.max_output_tokens)
            billed = self.cost_usd(completion.input_tokens, completion.output_tokens)
            self._tm.tokens.labels(self.name, "input").inc(completion.input_tokens)
            self._tm.tokens.labels(self.name, "output").inc(completion.output_tokens)
            self._tm.cost.labels(self.name).inc(billed)
            try:
                verdict = parse(completion.text)
            except ValueError as err:
                self._tm.requests.labels(self.name, "malformed").inc()
                logger.warning("judge %s: malformed verdict (%s): %s", self.name, err, short_detail(completion.text))
                raise JudgeError(self.name, "malformed", str(err)) from None
            self._tm.requests.labels(self.name, "ok").inc()
            return verdict
        finally:
            if is_trial:
                self.breaker.abandon_trial()  # a trial cancelled before it succeeded or failed frees its slot
            if self.budget:
                self.budget.settle(reserved, billed)
            self._update_gauges()

    async def _attempts(self, send: Callable[[], Awaitable[Completion]], estimated_tokens: int) -> Completion:
        cfg = self.config
        attempt = 0
        while True:
            if self._rpm:
                await self._rpm.acquire(1)
            if self._tpm:
                await self._tpm.acquire(estimated_tokens)
            started = time.perf_counter()
            try:
                async with asyncio.timeout(cfg.timeout):
                    completion = await send()
            except TimeoutError:
                error = ProviderError("timeout", f"no answer within {cfg.timeout:g}s")
            except ProviderError as err:
                error = err
            else:
                self._tm.duration.labels(self.name).observe(time.perf_counter() - started)
                self.breaker.record_success()
                return completion
            self._tm.duration.labels(self.name).observe(time.perf_counter() - started)
            self._tm.requests.labels(self.name, error.outcome).inc()
            self.breaker.record_failure()
            self._update_gauges()
            delay = self._retry_delay(error, attempt)
            if delay is None:
                raise JudgeError(self.name, error.outcome, f"{error} (after {attempt + 1} attempt(s))")
            logger.debug("judge %s: %s, retry %d in %.2fs", self.name, error.outcome, attempt + 1, delay)
            await self._sleep(delay)
            attempt += 1

    def _retry_delay(self, error: ProviderError, attempt: int) -> float | None:
        cfg = self.config
        if not error.retryable or attempt >= cfg.max_retries or self.breaker.is_open:
            return None
        backoff = random.uniform(0.0, min(_MAX_BACKOFF, cfg.retry_initial_interval * 2**attempt))
        if error.retry_after is not None:
            if error.retry_after > cfg.max_retry_after:
                return None
            return max(backoff, error.retry_after)
        return backoff

    def _refuse(self, outcome: str, detail: str) -> None:
        self._tm.requests.labels(self.name, outcome).inc()
        self._update_gauges()
        raise JudgeError(self.name, outcome, detail)

    def _update_gauges(self) -> None:
        self._tm.circuit_state.labels(self.name).set(self.breaker.state)
        if self.budget:
            self._tm.budget_remaining.labels(self.name).set(self.budget.remaining)
