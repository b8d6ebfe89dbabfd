"""The one limiter every judge call goes through (architecture guide rules 9 and 10).

Order for one call: budget (the attempt's worst-case cost and tokens are reserved in every configured window,
USD/tokens per UTC hour/day; if one could be passed the call is not made, counted ``budget_exhausted``) ->
circuit breaker (open: fail fast, counted ``circuit_open``) -> the call's own task: concurrency semaphore (the
circuit is checked again once a slot is free) -> per attempt: requests- and tokens-per-minute buckets, then the
provider call under an ``asyncio.timeout``; the answer is parsed (unparseable: counted ``malformed``, never
retried). Retryable failures (429, 5xx, timeout, lost connection) are retried up to ``max_retries`` times with
full-jitter exponential backoff, waiting at least the server's ``Retry-After`` (a longer wait than
``max_retry_after`` or than the call has left ends the call).

Deadline: a call ends by ``JudgeConfig.call_deadline()`` (every wait and attempt included; what is left cuts the
attempt timeout), which the root config requires to be shorter than ``pipeline.metric_timeout``.

Settlement (evald/judges/usage.py): every attempt is counted by outcome and charged (the reported usage, the
worst case when the usage is unusable or the attempt may have been billed without an answer, nothing for an HTTP
error status); the charge settles the attempt's reservation; a retry after a charged attempt reserves again.

Abandoned calls: the call runs in its own task; a caller cancelled (its metric's timeout) while an attempt is in
flight leaves that attempt running until it settles: it keeps its reservation and its concurrency slot until
then, is charged what it billed, counted ``timeout`` (even if it answered: nobody can use the answer) and fed to
the circuit breaker as a failure; it is not retried. A call abandoned before anything was sent is cancelled at
once (counted ``timeout``, nothing charged).

Coordination (``coordination``, optional): the budget, the rate limits and the circuit breaker are the shared ones
of evald/judges/coordination/ (Redis; in process, at each replica's share, while Redis is unreachable); the order
and the semantics above are the same.

Refusals (``budget_exhausted``, ``circuit_open``) raise ``JudgeSkipped`` (the metric is skipped with that reason,
never an error and never a 0); failures after sending raise ``JudgeError`` (an error outcome).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from evald.exporters.sending_policy import TokenBucket
from evald.judges.config import JudgeConfig
from evald.judges.governors import BudgetExhausted, BudgetPolicy, CircuitBreaker, Clock, build_budget
from evald.judges.providers import Completion, ProviderError
from evald.judges.telemetry import CIRCUIT_HALF_OPEN, JudgeTelemetry
from evald.judges.usage import ANTHROPIC_TOOL_PROMPT_TOKENS, Charge, charge_for, worst_case_tokens
from evald.outcomes import MetricSkipped, MetricUnavailable, short_detail
from evald.pricing import TOKENS_PER_UNIT

if TYPE_CHECKING:
    from evald.judges.coordination.governance import Coordination

logger = logging.getLogger(__name__)
T = TypeVar("T")


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


@dataclass(slots=True)
class _Run:
    """One admitted call, shared by its caller and the task that makes it."""

    worst: Charge
    reservation: Any  # a Reservation of the judge's budget, or None
    is_trial: bool
    deadline: float  # loop time
    sending: bool = False
    attempts: int = 0
    abandoned: bool = False


_FREE = Charge(0, 0)


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
        self.coordination: Coordination | None = None
        if config.coordination is None:  # governed in process; each bucket bursts up to one minute's worth
            rpm, tpm = config.requests_per_minute, config.tokens_per_minute
            self._rpm = TokenBucket(rpm, burst=rpm, clock=clock) if rpm else None
            self._tpm = TokenBucket(tpm, burst=tpm, clock=clock) if tpm else None
            breaker = config.circuit_breaker
            self.breaker = CircuitBreaker(breaker.failures, breaker.reset_after, clock)
            self.budget: BudgetPolicy | None = build_budget(config, wall_clock)
        else:  # the shared governors; imports redis only for a coordinated judge
            from evald.judges.coordination.governance import Coordination

            self.coordination = shared = Coordination(name, config, telemetry.registry, clock=clock,
                                                      wall_clock=wall_clock)
            self.budget, self._rpm, self._tpm, self.breaker = shared.budget, shared.rpm, shared.tpm, shared.breaker
        self._price = config.resolved_price()
        self.deadline = config.call_deadline()
        self._allowance = ANTHROPIC_TOOL_PROMPT_TOKENS if config.provider == "anthropic" else 0
        #: calls in flight (including those their caller abandoned), strongly held until they settle
        self.running: set[asyncio.Task[Completion]] = set()
        for window in self.budget.windows if self.budget else ():
            gauge = telemetry.budget_remaining if window.unit == "usd" else telemetry.budget_remaining_tokens
            gauge.labels(name, window.window).set_function(window.left)  # current at every scrape
        self._update_gauges()

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        if self._price is None:
            return 0.0
        return (input_tokens * self._price.input + output_tokens * self._price.output) / TOKENS_PER_UNIT

    def worst_case(self, prompt: str) -> Charge:
        """The most one attempt sending ``prompt`` (the whole text sent, schema included) can bill."""
        return Charge(worst_case_tokens(prompt) + self._allowance, self.config.max_output_tokens)

    def worst_case_cost(self, prompt: str) -> float:
        worst = self.worst_case(prompt)
        return self.cost_usd(worst.input_tokens, worst.output_tokens)

    async def call(self, prompt: str, send: Callable[[], Awaitable[Completion]], parse: Callable[[str], T], *,
                   output_tokens: int | None = None) -> T:
        """Run ``send`` (one provider request for ``prompt``, the whole text sent, the verdict schema included)
        under every limit, then
        ``parse`` its text; a ``ValueError`` from ``parse`` is a counted ``malformed`` outcome (not retried).
        ``output_tokens``: the request's own ``max_tokens`` when it is not ``max_output_tokens`` (a batch)."""
        worst = self.worst_case(prompt)
        if output_tokens is not None:
            worst = Charge(worst.input_tokens, output_tokens)
        try:
            reservation = await self._reserve(worst)
        except BudgetExhausted as refused:
            self._refuse("budget_exhausted", str(refused))
        if not self.breaker.allow():
            self._release(reservation)
            self._refuse("circuit_open", "circuit open after repeated failures; calls fail fast")
        loop = asyncio.get_running_loop()
        run = _Run(worst, reservation, self.breaker.state == CIRCUIT_HALF_OPEN, loop.time() + self.deadline)
        task = loop.create_task(self._run(run, send))
        self.running.add(task)
        task.add_done_callback(self._finished)
        try:
            completion = await asyncio.shield(task)
        except asyncio.CancelledError:
            self._abandon(run, task)
            raise
        try:
            verdict = parse(completion.text)
        except ValueError as err:
            self._tm.requests.labels(self.name, "malformed").inc()
            logger.warning("judge %s: malformed verdict (%s): %s", self.name, err, short_detail(completion.text))
            raise JudgeError(self.name, "malformed", str(err)) from None
        self._tm.requests.labels(self.name, "ok").inc()
        return verdict

    async def aclose(self) -> None:
        """Cancel the calls still running (each settles: an attempt in flight is charged its worst case)."""
        for task in list(self.running):
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        if self.coordination is not None:
            await self.coordination.aclose()

    def _abandon(self, run: _Run, task: asyncio.Task[Completion]) -> None:
        run.abandoned = True
        if task.done():  # it ended just as its caller gave up: an answer nobody uses
            if not task.cancelled() and task.exception() is None:
                self._tm.requests.labels(self.name, "timeout").inc()
            return
        if not run.sending:  # nothing in flight: stop; an attempt in flight settles in its task
            if run.attempts == 0:
                self._tm.requests.labels(self.name, "timeout").inc()
            task.cancel()

    def _finished(self, task: asyncio.Task[Completion]) -> None:
        self.running.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the caller, if any, has it too

    async def _run(self, run: _Run, send: Callable[[], Awaitable[Completion]]) -> Completion:
        try:
            try:
                async with asyncio.timeout_at(run.deadline):
                    await self._semaphore.acquire()
            except TimeoutError:
                raise self._late(run) from None
            try:
                if self.breaker.is_open and not run.is_trial:
                    self._refuse("circuit_open", "circuit opened while the call waited; calls fail fast")
                return await self._attempts(run, send)
            finally:
                self._semaphore.release()
        finally:
            if run.is_trial:
                self.breaker.abandon_trial()  # a trial that ended without a result frees its slot
            self._release(run.reservation)
            run.reservation = None
            self._update_gauges()

    async def _attempts(self, run: _Run, send: Callable[[], Awaitable[Completion]]) -> Completion:
        cfg = self.config
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with asyncio.timeout_at(run.deadline):
                    if self._rpm:
                        await self._rpm.acquire(1)
                    if self._tpm:
                        await self._tpm.acquire(run.worst.tokens)
            except TimeoutError:
                raise self._late(run) from None
            if run.reservation is None and self.budget is not None:
                try:
                    run.reservation = await self._reserve(run.worst)
                except BudgetExhausted as refused:
                    self._refuse("budget_exhausted", f"no budget left for a retry: {refused}")
            if (left := run.deadline - loop.time()) <= 0:
                raise self._late(run)
            started = time.perf_counter()
            run.sending = True
            try:
                async with asyncio.timeout(min(cfg.timeout, left)):
                    completion = await send()
            except TimeoutError:
                error = ProviderError("timeout", f"no answer within {cfg.timeout:g}s", maybe_billed=True)
            except ProviderError as err:
                error = err
            except asyncio.CancelledError:  # closing: the request may have been billed
                self._settle(run, run.worst)
                raise
            else:
                self._tm.duration.labels(self.name).observe(time.perf_counter() - started)
                self._settle(run, self._answer_charge(run, completion))
                if run.abandoned:
                    self._tm.requests.labels(self.name, "timeout").inc()
                    self.breaker.record_failure()
                    raise JudgeError(self.name, "timeout", "answered after its metric gave up")
                self.breaker.record_success()
                return completion
            finally:
                run.sending = False
                run.attempts += 1
            self._tm.duration.labels(self.name).observe(time.perf_counter() - started)
            self._settle(run, self._error_charge(run, error))
            self._tm.requests.labels(self.name, error.outcome).inc()
            self.breaker.record_failure()
            self._update_gauges()
            delay = None if run.abandoned else self._retry_delay(error, run.attempts - 1, run.deadline - loop.time())
            if delay is None:
                raise JudgeError(self.name, error.outcome, f"{error} (after {run.attempts} attempt(s))")
            logger.debug("judge %s: %s, retry %d in %.2fs", self.name, error.outcome, run.attempts, delay)
            await self._sleep(delay)

    def _answer_charge(self, run: _Run, completion: Completion) -> Charge:
        worst = run.worst
        charge = charge_for(completion.input_tokens, completion.output_tokens, worst.input_tokens, worst.output_tokens)
        if charge.invalid is not None:
            self._tm.usage_invalid.labels(self.name, charge.invalid).inc()
            logger.warning("judge %s: usage %s (%s): charged %d tokens", self.name, charge.invalid,
                           short_detail(f"{completion.input_tokens!r}/{completion.output_tokens!r}"), charge.tokens)
        return charge

    def _error_charge(self, run: _Run, error: ProviderError) -> Charge:
        if error.usage is not None:
            return self._answer_charge(run, Completion("", *error.usage))
        return run.worst if error.maybe_billed else _FREE

    def _settle(self, run: _Run, charge: Charge) -> None:
        """Charge one attempt: its reservation is settled with ``charge`` (a free attempt keeps it for a retry)."""
        if charge.tokens == 0:
            return
        usd = self.cost_usd(charge.input_tokens, charge.output_tokens)
        self._tm.tokens.labels(self.name, "input").inc(charge.input_tokens)
        self._tm.tokens.labels(self.name, "output").inc(charge.output_tokens)
        self._tm.cost.labels(self.name).inc(usd)
        if self.budget is not None and run.reservation is not None:
            self.budget.settle(run.reservation, usd, charge.tokens)
        run.reservation = None

    async def _reserve(self, worst: Charge) -> Any:
        """A reservation of ``worst`` (None without a budget); raises ``BudgetExhausted``."""
        if self.budget is None:
            return None
        return await self.budget.areserve(self.cost_usd(worst.input_tokens, worst.output_tokens), worst.tokens)

    def _release(self, reservation: Any) -> None:
        if self.budget is not None and reservation is not None:
            self.budget.settle(reservation, 0.0, 0)

    def _late(self, run: _Run) -> JudgeError:
        """The call's deadline passed while it waited for a slot or a rate bucket: counted ``timeout``."""
        self._tm.requests.labels(self.name, "timeout").inc()
        return JudgeError(self.name, "timeout", f"no slot within the call's deadline of {self.deadline:g}s")

    def _retry_delay(self, error: ProviderError, attempt: int, left: float) -> float | None:
        cfg = self.config
        if not error.retryable or attempt >= cfg.max_retries or self.breaker.is_open:
            return None
        backoff = random.uniform(0.0, cfg.backoff_cap(attempt))
        if error.retry_after is not None:
            if error.retry_after > cfg.max_retry_after:
                return None
            backoff = max(backoff, error.retry_after)
        return backoff if backoff < left else None

    def _refuse(self, outcome: str, detail: str) -> NoReturn:
        self._tm.requests.labels(self.name, outcome).inc()
        self._update_gauges()
        raise JudgeSkipped(self.name, outcome, detail)

    def _update_gauges(self) -> None:
        self._tm.circuit_state.labels(self.name).set(self.breaker.state)
