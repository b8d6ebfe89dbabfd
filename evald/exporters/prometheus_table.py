"""The Prometheus exporter's bounded score table: outcome counts and histograms with exemplars, rolling windows.

Written by the exporter on the event loop and snapshotted by the registry's collector from the scrape thread,
under one lock. Memory is bounded: at most ``max_series`` label sets, each with fixed-size histograms and at most 60
time buckets per window (the short ``pass_rate_window`` and the long ``baseline_window``).

Online baseline: per label set, the pass rate over ``baseline_window`` (default 1 day) is the baseline; a label set
is in regression when its short-window pass rate is more than ``regression_margin`` below the baseline and both
windows hold at least ``regression_min_evaluations`` pass/fail evaluations. Teams without long Prometheus retention
can alert on ``evald_pass_rate_regression == 1``.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evald.exporters.prometheus import PrometheusExporterConfig
    from evald.model import ScoredCase

OVERFLOW = "__overflow__"
OUTCOMES = ("pass", "fail", "skipped", "error")
PASS, FAIL, SKIPPED, ERROR = range(4)
MAX_WINDOW_BUCKETS = 60
MAX_LABEL_VALUE = 128

Key = tuple[str, str, str, str, str]  # metric, dimension, scope, service_name, model
Exemplar = tuple[str, str, float, float]  # trace_id, span_id, value, unix time


@dataclass(slots=True)
class Histogram:
    counts: list[int]  # per bucket, not cumulative; the last one is +Inf
    total: float = 0.0
    #: per bucket, the latest evaluation that landed there: (trace_id, span_id, value, unix time) or None
    exemplars: list[Exemplar | None] = field(default_factory=list)


#: ``Window.index`` before the first count
_NO_BUCKET = -(1 << 62)


@dataclass(slots=True)
class Window:
    """Pass/fail counts in fixed time buckets: the newest in ``index``/``passes``/``fails`` (a count is one native
    add when compiled), the older ones in ``buckets`` as ``[bucket_index, passes, fails]``, oldest first."""

    buckets: deque[list[int]] = field(default_factory=deque)
    index: int = _NO_BUCKET
    passes: int = 0
    fails: int = 0

    def add(self, index: int, passed: bool) -> None:
        if index != self.index:
            if self.index != _NO_BUCKET:
                self.buckets.append([self.index, self.passes, self.fails])
            self.index, self.passes, self.fails = index, 0, 0
        if passed:
            self.passes += 1
        else:
            self.fails += 1

    def expire(self, oldest: int) -> None:
        while self.buckets and self.buckets[0][0] < oldest:
            self.buckets.popleft()
        if self.index < oldest:
            self.index, self.passes, self.fails = _NO_BUCKET, 0, 0

    def slide(self, index: int, keep: int, passed: bool) -> None:
        """Count one pass/fail in bucket ``index``, dropping buckets older than the last ``keep``."""
        oldest = index - keep + 1
        if self.index < oldest:  # the newest bucket is out of the window (or there is none): so are the older ones
            self.buckets.clear()
            self.index, self.passes, self.fails = index, 0, 0
        elif self.buckets and self.buckets[0][0] < oldest:
            self.expire(oldest)
        self.add(index, passed)

    def totals(self) -> tuple[int, int]:
        return (self.passes + sum(b[1] for b in self.buckets), self.fails + sum(b[2] for b in self.buckets))


class Series:
    """What one label set holds; the histogram and windows exist once it has seen a score."""

    __slots__ = ("key", "counts", "exemplars", "hist", "window", "baseline")

    def __init__(self, key: Key) -> None:
        self.key = key  # the label set it is reported under (an overflow key for the label sets folded into it)
        self.counts = [0, 0, 0, 0]  # per OUTCOMES
        #: per OUTCOMES, the latest evaluation with that outcome: (trace_id, span_id, score or 1.0, unix time) or None
        self.exemplars: list[Exemplar | None] = [None, None, None, None]
        self.hist: Histogram | None = None
        self.window: Window | None = None
        self.baseline: Window | None = None


class ScoreTable:
    """The bounded table the exporter writes and the collector snapshots (thread-safe)."""

    def __init__(self, cfg: PrometheusExporterConfig, clock: Callable[[], float]) -> None:
        self.cfg = cfg
        self.clock = clock
        self.bounds = tuple(cfg.score_buckets)
        self.window_buckets = min(MAX_WINDOW_BUCKETS, max(6, math.ceil(cfg.pass_rate_window / 10.0)))
        self.bucket_seconds = cfg.pass_rate_window / self.window_buckets
        self.lock = threading.Lock()
        #: one lookup per evaluation; the four views below share its objects (the collector and tests read them)
        self.series: dict[Key, Series] = {}
        self.admitted = 0  # label sets admitted under max_series (overflow sets not counted)
        self.outcomes: dict[Key, list[int]] = {}
        self.outcome_exemplars: dict[Key, list[Exemplar | None]] = {}
        self.histograms: dict[Key, Histogram] = {}
        self.windows: dict[Key, Window] = {}
        self.overflowed = 0
        # the long window of the online baseline (same bounded bucket scheme, coarser buckets)
        self.baseline_buckets = MAX_WINDOW_BUCKETS
        self.baseline_seconds = max(cfg.baseline_window, cfg.pass_rate_window) / self.baseline_buckets
        self.baselines: dict[Key, Window] = {}
        self.with_baseline = cfg.baseline_window > 0

    def _index(self) -> int:
        return math.floor(self.clock() / self.bucket_seconds)

    def indices(self) -> tuple[int, int]:
        """The current bucket of the pass-rate window and of the baseline window (one clock read)."""
        now = self.clock()
        return math.floor(now / self.bucket_seconds), math.floor(now / self.baseline_seconds)

    def _series(self, key: Key) -> Series:
        """The series of ``key``, created on first use; past ``max_series`` new label sets share an overflow series
        per (metric, dimension, scope)."""
        series = self.series.get(key)
        if series is not None:
            return series
        if self.admitted < self.cfg.max_series:
            self.admitted += 1
        else:
            self.overflowed += 1
            key = (key[0], key[1], key[2], OVERFLOW, OVERFLOW)
            series = self.series.get(key)
            if series is not None:
                return series
        series = self.series[key] = Series(key)
        self.outcomes[key] = series.counts
        self.outcome_exemplars[key] = series.exemplars
        return series

    def record(self, key: Key, outcome: int, value: float | None = None, indices: tuple[int, int] | None = None,
               exemplar: Exemplar | None = None) -> None:
        """Count one outcome (an index into OUTCOMES); a score also feeds the histogram and the windows.

        ``indices`` are the current window buckets (:meth:`indices`); callers recording a batch compute them once.
        """
        series = self.series.get(key) or self._series(key)
        series.counts[outcome] += 1
        if exemplar is not None:
            series.exemplars[outcome] = exemplar
        if value is None:
            return
        hist = series.hist
        if hist is None:
            hist = series.hist = self.histograms[series.key] = Histogram([0] * (len(self.bounds) + 1))
        bucket = bisect.bisect_left(self.bounds, value)
        hist.counts[bucket] += 1
        hist.total += value
        if exemplar is not None:
            if not hist.exemplars:
                hist.exemplars = [None] * len(hist.counts)
            hist.exemplars[bucket] = exemplar
        index, long_index = self.indices() if indices is None else indices
        window = series.window
        if window is None:
            window = series.window = self.windows[series.key] = Window()
        window.slide(index, self.window_buckets, outcome == PASS)
        if self.with_baseline:
            baseline = series.baseline
            if baseline is None:
                baseline = series.baseline = self.baselines[series.key] = Window()
            baseline.slide(long_index, self.baseline_buckets, outcome == PASS)

    def record_batch(self, batch: Sequence[ScoredCase], now: float) -> None:
        """Every score, skip and error of a batch, under the lock; each with an exemplar linking its trace and span,
        stamped ``now`` (for the outcome counter, and for a score's histogram bucket)."""
        with self.lock:
            indices = self.indices()
            for scored in batch:
                case = scored.case
                scope, service, model = label(case.scope), label(case.service_name), label(case.model)
                linked = bool(case.trace_id and case.span_id)
                for score in scored.scores:
                    key = (label(score.name), str(score.dimension), scope, service, model)  # str(): not the slow .value
                    exemplar = (case.trace_id, case.span_id or "", score.value, now) if linked else None
                    self.record(key, PASS if score.passed else FAIL, score.value, indices, exemplar)
                linked_only = (case.trace_id, case.span_id or "", 1.0, now) if linked else None
                for outcome, entries in ((SKIPPED, scored.skipped), (ERROR, scored.errors)):
                    for name, _reason in entries:
                        dimension = label(scored.metric_dimensions.get(name, ""))
                        self.record((label(name), dimension, scope, service, model), outcome, None, None,
                                    linked_only)

    def baseline_states(self) -> list[tuple[Key, float, int]]:
        """Per label set: (baseline pass rate, regression flag 0/1) over ``baseline_window``; empty ones dropped."""
        oldest = math.floor(self.clock() / self.baseline_seconds) - self.baseline_buckets + 1
        short = {key: self.windows[key].totals() for key in self.windows}
        out: list[tuple[Key, float, int]] = []
        minimum, margin = self.cfg.regression_min_evaluations, self.cfg.regression_margin
        for key in list(self.baselines):
            baseline = self.baselines[key]
            baseline.expire(oldest)
            passes, fails = baseline.totals()
            if passes + fails == 0:
                del self.baselines[key]
                self.series[key].baseline = None
                continue
            rate = passes / (passes + fails)
            recent_passes, recent_fails = short.get(key, (0, 0))
            recent = recent_passes + recent_fails
            regressed = (recent >= minimum and passes + fails >= minimum
                         and recent_passes / recent < rate - margin)
            out.append((key, rate, int(regressed)))
        return out

    def pass_rates(self) -> list[tuple[Key, float]]:
        """Current pass rate per label set; drops label sets whose window is empty."""
        oldest = self._index() - self.window_buckets + 1
        out: list[tuple[Key, float]] = []
        for key in list(self.windows):
            window = self.windows[key]
            window.expire(oldest)
            passes, fails = window.totals()
            if passes + fails == 0:
                del self.windows[key]
                self.series[key].window = None
                continue
            out.append((key, passes / (passes + fails)))
        return out


def label(value: object) -> str:
    """A label value: strings cut to ``MAX_LABEL_VALUE`` characters, anything else empty."""
    return value[:MAX_LABEL_VALUE] if isinstance(value, str) else ""
