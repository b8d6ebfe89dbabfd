"""The one limiter every judge call goes through (architecture guide rules 9 and 10).

Order for one call: budget (the call's worst-case cost and tokens are reserved in every configured window,
USD/tokens per UTC hour/day; if one could be passed the call is not made, counted ``budget_exhausted``) ->
circuit breaker (open: fail fast, counted ``circuit_open``) ->
concurrency semaphore -> per attempt: requests- and tokens-per-minute buckets, then the provider call under an
``asyncio.timeout``; the answer is parsed (unparseable: counted ``malformed``, never retried).
Retryable failures (429, 5xx, timeout, lost connection) are retried up to ``max_retries``
times with full-jitter exponential backoff, waiting at least the server's ``Retry-After`` (a longer wait than
``max_retry_after`` ends the call). Every attempt is counted by outcome; the billed usage settles the budget.
Refusals (``budget_exhausted``, ``circuit_open``) raise ``JudgeSkipped`` (the metric is skipped with that reason,
never an error and never a 0); failures after sending raise ``JudgeError`` (an error outcome).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

from evald.exporters.sending_policy import TokenBucket
from evald.judges.config import JudgeConfig
from evald.judges.governors import Budget, BudgetExhausted, CircuitBreaker, Clock, WindowBudget
from evald.judges.providers import Completion, ProviderError
from evald.judges.telemetry import CIRCUIT_HALF_OPEN, JudgeTelemetry
from evald.metrics.remote import MetricSkipped, MetricUnavailable, short_detail

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


class JudgeSkipped(MetricSkipped):
    """A judge call deliberately not made (``budget_exhausted``, ``circuit_open``, ``never_send``): a counted skip."""

    def __init__(self, judge: str, outcome: str, detail: str) -> None:
        super().__init__(outcome, f"judge {judge!r}: {detail}")
        self.outcome = outcome


def build_budget(config: JudgeConfig, wall_clock: Clock) -> Budget | None:
    """The judge's budget windows (None when it has no limit at all)."""
    limits = config.budget
    windows = [
        WindowBudget(unit, window, limit, wall_clock)
        for unit, spec in (("usd", limits.max_cost_usd), ("tokens", limits.max_tokens))
        for window, limit in (("hour", spec.hour), ("day", spec.day))
        if limit is not None
    ]
    return Budget(windows) if windows else None


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
        # each bucket bursts up to one minute's worth
        rpm, tpm = config.requests_per_minute, config.tokens_per_minute
        self._rpm = TokenBucket(rpm, burst=rpm, clock=clock) if rpm else None
        self._tpm = TokenBucket(tpm, burst=tpm, clock=clock) if tpm else None
        breaker = config.circuit_breaker
        self.breaker = CircuitBreaker(breaker.failures, breaker.reset_after, clock)
        self.budget = build_budget(config, wall_clock)
        self._price = config.resolved_price()
        for window in self.budget.windows if self.budget else ():
            gauge = telemetry.budget_remaining if window.unit == "usd" else telemetry.budget_remaining_tokens
            gauge.labels(name, window.window).set_function(window.left)  # current at every scrape
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
        worst_tokens = worst_case_tokens(prompt) + self.config.max_output_tokens
        reservation = None
        if self.budget:
            try:
                reservation = self.budget.reserve(self.worst_case_cost(prompt), worst_tokens)
            except BudgetExhausted as refused:
                self._refuse("budget_exhausted", str(refused))
        if not self.breaker.allow():
            if self.budget is not None and reservation is not None:
                self.budget.settle(reservation, 0.0, 0)
            self._refuse("circuit_open", "circuit open after repeated failures; calls fail fast")
        is_trial = self.breaker.state == CIRCUIT_HALF_OPEN
        billed, billed_tokens = 0.0, 0
        try:
            async with self._semaphore:
                completion = await self._attempts(send, worst_tokens)
            billed = self.cost_usd(completion.input_tokens, completion.output_tokens)
            billed_tokens = completion.input_tokens + completion.output_tokens
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
            if self.budget is not None and reservation is not None:
                self.budget.settle(reservation, billed, billed_tokens)
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

    def _refuse(self, outcome: str, detail: str) -> NoReturn:
        self._tm.requests.labels(self.name, outcome).inc()
        self._update_gauges()
        raise JudgeSkipped(self.name, outcome, detail)

    def _update_gauges(self) -> None:
        self._tm.circuit_state.labels(self.name).set(self.breaker.state)
