"""The limiter's parts: a circuit breaker and hard budgets (USD and tokens per UTC hour and day) with
reservations (the rate limits are :class:`evald.exporters.sending_policy.TokenBucket`s, as for the exporters).

Each takes a ``clock`` (seconds, monotonic for rates, wall time for the budget windows) so tests can drive time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evald.judges.config import JudgeConfig
from evald.judges.telemetry import CIRCUIT_CLOSED, CIRCUIT_HALF_OPEN, CIRCUIT_OPEN

Clock = Callable[[], float]


class CircuitBreaker:
    """Opens after ``failures`` consecutive failures; after ``reset_after`` seconds one trial call goes through:
    success closes it, failure opens it again. While open, ``allow()`` is False (the caller fails fast)."""

    def __init__(self, failures: int, reset_after: float, clock: Clock = time.monotonic) -> None:
        self._threshold = failures
        self._reset_after = reset_after
        self._clock = clock
        self._failures = 0
        self._opened_at = 0.0
        self._trial_in_flight = False
        self.state = CIRCUIT_CLOSED

    def allow(self) -> bool:
        if self.state == CIRCUIT_OPEN and self._clock() - self._opened_at >= self._reset_after:
            self.state = CIRCUIT_HALF_OPEN
            self._trial_in_flight = False
        if self.state == CIRCUIT_HALF_OPEN:
            if self._trial_in_flight:
                return False
            self._trial_in_flight = True
            return True
        return self.state == CIRCUIT_CLOSED

    def record_success(self) -> None:
        self._failures = 0
        self._trial_in_flight = False
        self.state = CIRCUIT_CLOSED

    def record_failure(self) -> None:
        self._failures += 1
        if self.state == CIRCUIT_HALF_OPEN or self._failures >= self._threshold:
            self.state = CIRCUIT_OPEN
            self._opened_at = self._clock()
            self._trial_in_flight = False

    def abandon_trial(self) -> None:
        """Free the half-open trial slot of a call that ended without a result (e.g. cancelled)."""
        self._trial_in_flight = False

    @property
    def is_open(self) -> bool:
        return self.state == CIRCUIT_OPEN


WINDOW_SECONDS: dict[str, int] = {"hour": 3600, "day": 86400}
_ADJECTIVE = {"hour": "hourly", "day": "daily"}


class WindowBudget:
    """One hard limit (``unit`` usd or tokens) over one UTC window (``hour`` or ``day``: the epoch is a UTC
    midnight, so ``clock() // 3600`` and ``// 86400`` are UTC hours and days). Amounts are reserved before a
    call and settled with the billed amount after it, in the window the call was admitted in: a reservation
    that outlives its window is billed to that window (already closed), never to the next one."""

    def __init__(self, unit: str, window: str, limit: float, clock: Clock = time.time) -> None:
        self.unit, self.window, self.limit = unit, window, limit
        self._seconds = WINDOW_SECONDS[window]
        self._clock = clock
        self._period = -1
        self._spent = 0.0
        self._reserved = 0.0

    def period(self) -> int:
        """The current window's number; a new window starts with nothing spent or reserved."""
        period = int(self._clock() // self._seconds)
        if period != self._period:
            self._period, self._spent, self._reserved = period, 0.0, 0.0
        return period

    def fits(self, amount: float) -> bool:
        self.period()
        return self._spent + self._reserved + amount <= self.limit * (1 + 1e-12)

    def reserve(self, amount: float) -> int:
        period = self.period()
        self._reserved += amount
        return period

    def settle(self, period: int, reserved: float, billed: float) -> None:
        if self.period() == period:
            self._reserved = max(0.0, self._reserved - reserved)
            self._spent += billed

    @property
    def spent(self) -> float:
        self.period()
        return self._spent

    @property
    def reserved(self) -> float:
        self.period()
        return self._reserved

    @property
    def remaining(self) -> float:
        return self.left()

    def left(self) -> float:
        """The limit minus what was billed in the current window; reads without rolling the window (safe from
        a scrape on another thread)."""
        current = int(self._clock() // self._seconds) == self._period
        return max(0.0, self.limit - self._spent) if current else self.limit

    def describe(self) -> str:
        limit = f"${self.limit:g}" if self.unit == "usd" else f"{self.limit:g} tokens"
        return f"{_ADJECTIVE[self.window]} budget {limit} (UTC {self.window})"


@dataclass(frozen=True, slots=True)
class Reservation:
    usd: float
    tokens: float
    periods: tuple[int, ...]


class BudgetExhausted(Exception):
    def __init__(self, window: WindowBudget) -> None:
        super().__init__(f"{window.describe()} would be exceeded; call not made")
        self.window = window


class Budget:
    """All the windows of one judge (USD and tokens, per hour and per day). ``reserve`` is all-or-nothing: a
    call is admitted only when its worst case fits every window, so no window can ever be exceeded by the
    billed amounts (as long as the provider bills no more than the worst case)."""

    def __init__(self, windows: list[WindowBudget]) -> None:
        self.windows = windows

    def reserve(self, usd: float, tokens: float) -> Reservation:
        for window in self.windows:
            if not window.fits(usd if window.unit == "usd" else tokens):
                raise BudgetExhausted(window)
        periods = tuple(w.reserve(usd if w.unit == "usd" else tokens) for w in self.windows)
        return Reservation(usd, tokens, periods)

    async def areserve(self, usd: float, tokens: float) -> Reservation:
        """``reserve`` for the limiter (no ``await`` inside: the check and the reservation stay one step)."""
        return self.reserve(usd, tokens)

    def settle(self, reservation: Reservation, usd: float, tokens: float) -> None:
        for window, period in zip(self.windows, reservation.periods, strict=True):
            if window.unit == "usd":
                window.settle(period, reservation.usd, usd)
            else:
                window.settle(period, reservation.tokens, tokens)


class BudgetWindowView(Protocol):
    unit: str
    window: str

    def left(self) -> float: ...


class BudgetPolicy(Protocol):
    """What the limiter needs of a budget: ``Budget`` (in process) or the shared one
    (evald/judges/coordination/redis_budget.py)."""

    @property
    def windows(self) -> Sequence[BudgetWindowView]: ...

    async def areserve(self, usd: float, tokens: float) -> Any: ...

    def settle(self, reservation: Any, usd: float, tokens: float) -> None: ...


def budget_limits(config: JudgeConfig) -> list[tuple[str, str, float]]:
    """(unit, window, limit) of each budget window the judge configures: usd then tokens, hour then day."""
    limits = config.budget
    return [
        (unit, window, limit)
        for unit, spec in (("usd", limits.max_cost_usd), ("tokens", limits.max_tokens))
        for window, limit in (("hour", spec.hour), ("day", spec.day))
        if limit is not None
    ]


def build_budget(config: JudgeConfig, wall_clock: Clock) -> Budget | None:
    """The judge's budget windows (None when it has no limit at all)."""
    windows = [WindowBudget(unit, window, limit, wall_clock) for unit, window, limit in budget_limits(config)]
    return Budget(windows) if windows else None
