"""The policy half of the shared sending helper: its config blocks, error kinds, backoff, retry hints, rate limit.

Config blocks (Collector exporterhelper names, reused by every network exporter):
  sending_queue     ``queue_size`` (scores waiting; default 1000), ``num_consumers`` (concurrent sends; default 10),
                    ``block_on_overflow`` (a full queue makes the pipeline wait instead of dropping; default true),
                    ``storage`` (``{directory, max_megabytes}``: a persistent queue on disk; default none = memory)
  retry_on_failure  ``enabled``, ``initial_interval`` (5s), ``max_interval`` (30s), ``max_elapsed_time`` (5m; 0 = no
                    limit), ``multiplier`` (1.5), ``randomization_factor`` (0.5), as in the Collector's configretry

Error kinds a ``send(batch)`` coroutine raises: :class:`RetryableError` (with an optional server ``retry_after``),
:class:`evald.errors.PermanentError` (never retried) and :class:`PartiallyRejected` (the server took part of the
batch and refused the rest for good), and :class:`SendSingly` (the server refused the batch for its form: it takes
one item per request). Any other exception, including a per-attempt timeout, is retryable.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Self

from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.errors import EvaldError, PermanentError

__all__ = [
    "PartiallyRejected", "PermanentError", "QueueStorageConfig", "RetryOnFailureConfig", "RetryableError",
    "SendSingly", "SendingQueueConfig",
    "TokenBucket", "backoff_delay", "parse_retry_after",
]

#: A server's retry hint is followed as given, plus up to this share of random extra delay (spreads consumers).
HINT_JITTER = 0.1


class RetryableError(EvaldError):
    """The send failed but may succeed later; ``retry_after`` is the server's hint in seconds, if it gave one."""

    def __init__(self, message: str, retry_after: float | None = None, reason: str = "error") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.reason = reason  # low-cardinality label of evald_exporter_retries_total: throttled, server_error, ...


class PartiallyRejected(PermanentError):
    """The server accepted part of the batch and refused ``rejected`` items permanently (e.g. Langfuse's 207)."""

    def __init__(self, message: str, rejected: int) -> None:
        super().__init__(message)
        self.rejected = rejected


class SendSingly(EvaldError):
    """The server refused the batch for its form, not its content: it takes one item per request (e.g. a Langfuse
    server without batched scores). The helper sends this batch's items again one per request and takes one item
    per batch from then on; the refused request counts neither as a retry nor as a drop."""


class QueueStorageConfig(ComponentConfig):
    directory: str = Field(
        min_length=1, description="Directory of the persistent queue (one sqlite file per exporter; created if "
        "missing). What is queued there survives a restart and is sent by the next evald process.",
    )
    max_megabytes: float = Field(
        256.0, gt=0, le=1_048_576, description="Bytes of queued items on disk at most (MiB); beyond it, as when "
        "`queue_size` is reached, the pipeline waits (`block_on_overflow`) or new scores are dropped.",
    )


class SendingQueueConfig(ComponentConfig):
    queue_size: int = Field(
        1000, gt=0, le=10_000_000,
        description="Scores waiting to be sent (counted in scores, not requests); beyond it the pipeline waits "
        "(`block_on_overflow: true`) or new scores are dropped with reason `queue_full`.",
    )
    num_consumers: int = Field(10, gt=0, le=256, description="Batches sent concurrently.")
    block_on_overflow: bool = Field(
        True, description="A full queue makes the pipeline wait for room (backpressure up to the receivers: Kafka "
        "pauses its partitions, OTLP refuses with a retry hint) instead of dropping new scores.",
    )
    storage: QueueStorageConfig | None = Field(
        None, description="Persistent queue on disk (`{directory: /var/lib/evald/queue}`); none = in memory.",
    )


class RetryOnFailureConfig(ComponentConfig):
    enabled: bool = Field(True, description="Retry retryable failures; `false`: one attempt, then drop.")
    initial_interval: Duration = Field(5.0, description="Wait after the first failure (before jitter).")
    max_interval: Duration = Field(30.0, description="Upper bound of the backoff interval (before jitter).")
    max_elapsed_time: Duration = Field(
        300.0, description="Give up on a batch this long after its first attempt (`retries_exhausted`); 0 = never."
    )
    multiplier: float = Field(1.5, ge=1.0, le=10.0, description="Growth factor of the interval per retry.")
    randomization_factor: float = Field(
        0.5, ge=0.0, lt=1.0, description="Jitter: each wait is drawn from interval x [1 - f, 1 + f]."
    )

    @model_validator(mode="after")
    def _check_intervals(self) -> Self:
        if self.initial_interval <= 0:
            raise ValueError("`initial_interval` must be greater than 0")
        if self.max_interval < self.initial_interval:
            raise ValueError(
                f"`max_interval` ({self.max_interval:g}s) must be >= `initial_interval` ({self.initial_interval:g}s)"
            )
        if self.max_elapsed_time and self.max_elapsed_time < self.initial_interval:
            raise ValueError(
                f"`max_elapsed_time` ({self.max_elapsed_time:g}s) must be 0 (no limit) or >= `initial_interval` "
                f"({self.initial_interval:g}s)"
            )
        return self


def backoff_delay(retry: int, config: RetryOnFailureConfig, rng: Callable[[], float] = random.random) -> float:
    """Wait before retry number ``retry`` (0 = the first retry): ``min(initial x multiplier^retry, max)`` x jitter.

    The jitter factor is uniform in ``[1 - randomization_factor, 1 + randomization_factor]``, as in the Collector.
    """
    exponent = min(retry, 1000)
    try:
        interval = config.initial_interval * config.multiplier**exponent
    except OverflowError:
        interval = math.inf
    interval = min(interval, config.max_interval)
    f = config.randomization_factor
    return interval * (1.0 - f + 2.0 * f * rng())


def hinted_delay(retry_after: float, rng: Callable[[], float] = random.random) -> float:
    """Wait for a server hint: at least the hint, at most ``HINT_JITTER`` more."""
    return retry_after * (1.0 + HINT_JITTER * rng())


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """HTTP ``Retry-After``: delay-seconds (``"2"``, tolerated ``"1.5"``) or an HTTP-date; None if absent or bad.

    A date in the past gives 0. ``now`` is a Unix time (default: the wall clock), for tests.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def format_http_date(unix_time: float) -> str:
    """An IMF-fixdate such as ``Wed, 21 Oct 2015 07:28:00 GMT`` (tests build Retry-After dates with it)."""
    return email.utils.format_datetime(datetime.fromtimestamp(unix_time, UTC), usegmt=True)


class TokenBucket:
    """Client-side rate limit: ``rate_per_minute`` tokens per minute, at most ``burst`` at once (waiters are served
    in order). Exporters take one token per request; judges take one per request or one per token.

    With the default burst of 1 the requests are evenly spaced, so no 60-second window ever holds more than
    ``rate_per_minute + 1`` of them (a fixed-window server limit, as Langfuse's, is never tripped by evald alone).
    """

    def __init__(self, rate_per_minute: float, burst: float = 1.0, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        if rate_per_minute <= 0 or burst <= 0:
            raise ValueError("rate_per_minute and burst must be > 0")
        self.capacity = float(burst)
        self._rate = rate_per_minute / 60.0  # tokens per second
        self._tokens = self.capacity
        self._clock = clock
        self._updated = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self._rate)
        self._updated = now

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait for ``amount`` tokens (callers queue up in order); more than ``burst`` waits for a full bucket."""
        amount = min(amount, self.capacity)
        async with self._lock:
            self._refill()
            while self._tokens < amount:
                await asyncio.sleep((amount - self._tokens) / self._rate)
                self._refill()
            self._tokens -= amount

    def drain(self) -> None:
        """Empty the bucket: the next ``acquire`` waits for tokens refilled from now on (a shared limiter switching
        to this bucket as its fallback, after the shared one may have just admitted a whole burst)."""
        self._refill()
        self._tokens = 0.0

    def refund(self) -> None:
        """Give back a token that was not used (nothing was left to send)."""
        self._refill()
        self._tokens = min(self.capacity, self._tokens + 1.0)


def classify_error(err: Exception) -> tuple[float | None, str]:
    """A failed attempt's retry hint and its ``evald_exporter_retries_total`` reason."""
    if isinstance(err, RetryableError):
        return err.retry_after, err.reason
    if isinstance(err, TimeoutError):
        return None, "timeout"
    return None, "error"


def describe_error(err: Any) -> str:
    """A short text for logs and drop reasons."""
    if isinstance(err, TimeoutError):
        return "attempt timed out"
    return f"{type(err).__name__}: {err}"[:300]


def next_retry(err: Exception, retry: int, elapsed: float, config: RetryOnFailureConfig,
               rng: Callable[[], float]) -> tuple[float | None, float | None, str]:
    """``(delay, hint, reason)`` for a failed attempt: the wait before the next one (the server's hint wins; none, or
    0, which would spin, means the jittered backoff), or ``delay`` None when retries are off or the next attempt
    would start past ``max_elapsed_time`` after the first (``elapsed`` since then)."""
    hint, reason = classify_error(err)
    if not config.enabled:
        return None, hint, reason
    delay = hinted_delay(hint, rng) if hint else backoff_delay(retry, config, rng)
    if config.max_elapsed_time and elapsed + delay > config.max_elapsed_time:
        return None, hint, reason
    return delay, hint, reason
