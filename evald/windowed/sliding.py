"""Sliding windows for ``WindowMetric`` kinds (calibration, discrimination, Brier): per (service_name, model).

Each binding keeps, per (service_name, model), the last ``window`` cases that carried a confidence and an outcome,
as (time, confidence, outcome); cases older than ``max_age`` leave the window. Every time a case enters, the
window is scored once it holds ``min_cases`` (fewer: no value, the gauge is not set). Bounds: at most
``max_windows`` (service_name, model) windows per binding; the cases of any further pair share one window labelled
``other``/``other``, so the gauges' label sets stay bounded. A case without a confidence in [0, 1] is counted
``no_confidence``, one without an outcome ``no_outcome``.

Where the confidence comes from (``confidence_from``): ``attribute`` (default) reads ``confidence_attribute``
(default ``evald.confidence``, a number or numeric text in [0, 1]) from the case's span, root span or resource;
``case`` reads ``EvalCase.confidence`` (what harness-evals importers and custom mappers fill; the built-in
conventions carry no standard confidence attribute); ``metric`` uses the score of ``confidence_metric`` on the same
case, e.g. a judge's normalised verdict.

Cost: scoring a window walks (and for discrimination sorts) all its cases. A window of up to ``RESCORE_FREE``
(1,000) cases is scored on every case; a larger one (``window`` allows 100,000) at most once per
``RESCORE_INTERVAL`` (1 s) of the stage's clock, its gauge keeping the latest value in between, so a busy
(service_name, model) pair costs one window walk per second instead of one per case. Run-level results
(``results``) are always scored afresh.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from typing import cast

from evald.case import EvalCase, Score
from evald.metrics.multi_case import WindowMetric, WindowOptions, attribute

OTHER = "other"
Pair = tuple[float, float, bool]  # (monotonic time, confidence, outcome)
RESCORE_FREE = 1000
RESCORE_INTERVAL = 1.0


def confidence_of(case: EvalCase, scores: Mapping[str, Score], options: WindowOptions) -> float | None:
    """The case's confidence by ``confidence_from``, when it is a number in [0, 1]."""
    raw: object
    if options.confidence_from == "case":
        raw = case.confidence
    elif options.confidence_from == "metric":
        score = scores.get(options.confidence_metric or "")
        raw = None if score is None else score.value
    else:
        raw = attribute(case, options.confidence_attribute)
    if isinstance(raw, str):
        try:
            raw = float(raw)
        except ValueError:
            return None
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw) or not 0 <= raw <= 1:
        return None
    return float(raw)


class SlidingWindows:
    """The windows of one ``WindowMetric`` binding, and the latest value of each."""

    def __init__(self, metric: WindowMetric, dropped: Callable[[str, int], None]) -> None:
        self.metric = metric
        self.options = cast(WindowOptions, metric.options)
        self._windows: dict[tuple[str, str], deque[Pair]] = {}
        self._last: dict[tuple[str, str], tuple[EvalCase, Score | None]] = {}
        self._scored_at: dict[tuple[str, str], float] = {}  # when a large window was last scored
        self._dropped = dropped

    def key(self, case: EvalCase) -> tuple[str, str]:
        key = (case.service_name or "", case.model or case.request_model or "")
        if key in self._windows or len(self._windows) < self.options.max_windows:
            return key
        return (OTHER, OTHER)

    def add(self, case: EvalCase, confidence: float | None, outcome: bool | None,
            now: float) -> tuple[tuple[str, str], Score | None] | None:
        """Add a case; (window key, its score or None when too few cases). None when the case could not enter."""
        if confidence is None:
            self._dropped("no_confidence", 1)
            return None
        if outcome is None:
            self._dropped("no_outcome", 1)
            return None
        key = self.key(case)
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = deque(maxlen=self.options.window)
        window.append((now, confidence, outcome))
        self._expire(window, now)
        previous = self._last.get(key)
        if len(window) > RESCORE_FREE and previous is not None and now - self._scored_at[key] < RESCORE_INTERVAL:
            score = previous[1]  # a large window scored less than a second ago: its value stands
        else:
            score = self._score(window)
            self._scored_at[key] = now
        self._last[key] = (case, score)
        return key, score

    def size(self, key: tuple[str, str]) -> int:
        """Cases in the window ``key`` (0: no such window)."""
        window = self._windows.get(key)
        return 0 if window is None else len(window)

    def results(self, now: float) -> list[tuple[tuple[str, str], EvalCase, Score | None, int]]:
        """Each window's current value (None: too few cases), with its latest case and its size: run-level results."""
        out = []
        for key, window in self._windows.items():
            self._expire(window, now)
            out.append((key, self._last[key][0], self._score(window), len(window)))
        return out

    def _expire(self, window: deque[Pair], now: float) -> None:
        while window and now - window[0][0] > self.options.max_age:
            window.popleft()

    def _score(self, window: deque[Pair]) -> Score | None:
        if len(window) < self.options.min_cases:
            return None
        return self.metric.measure_pairs([(c, y) for _, c, y in window])
