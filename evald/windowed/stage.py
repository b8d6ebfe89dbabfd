"""The windowed stage: scores metrics over more than one case (groups, sliding windows, composites) from the
scored cases the pipeline exports.

The pipeline gives it every multi-case binding (the scorer never runs them), copies the attributes they read onto
each case before it is queued (``annotate``), and hands it every batch of scored cases just before the exporters
(``observe``): what it returns (group scores, composites) is exported with the batch. An asynchronous group metric
is awaited in a task and exported when done (evald/windowed/judged.py). On shutdown (and at the end of ``evald
replay``) ``flush`` returns each sliding window's current value as a run-level result.

Planning: a consumer waits on a case until every metric it reads (a composite's weighted metrics, an
``outcome_metric``, a ``confidence_metric``) that is planned for the case has reported (a score, a skip or an
error, in any part: a judged case's scores arrive after its cheap ones), like a ``when:`` condition; a metric not
planned for the case counts as absent at once. Composites are fed first, so a composite can be an outcome or a
confidence, or weight an earlier composite. Unknown names are refused at config load (evald/windowed/references.py)
and again here (``ValueError``), except a preset's default weights, which weight those configured.

Config: ``metrics:`` entries (docs/multi-case-metrics.md); own bounds: ``max_pending`` (10000) and ``pending_age``.

Failure semantics: nothing here raises into the pipeline; a metric that raises is counted and logged at a limited
rate; every case a metric leaves out is counted by reason (``no_group_key``, ``no_variant``, ``no_outcome``,
``no_confidence``, ``group_expired``, ``group_evicted``, ``pending_expired``, ``pending_evicted``, ``not_applicable``,
``error``, ``busy``, ``timeout``, ``shutdown``). Self-metrics: ``evald_windowed_scores_total{metric}``,
``evald_windowed_dropped_total{metric,reason}``, ``evald_window_score{metric,service_name,model}`` (unset while a
window holds fewer than ``min_cases``), ``evald_window_cases{metric,service_name,model}``,
``evald_windowed_pending_cases``.
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from prometheus_client import Counter, Gauge

from evald.case import EvalCase, Score, new_score
from evald.metrics.multi_case import (
    CompositeMetric,
    GroupMetric,
    GroupOptions,
    OutcomeOptions,
    Run,
    WindowMetric,
    WindowOptions,
    golden_outcome,
    is_multi_case,
)
from evald.model import AssembledTrace, ScoredCase, new_scored_case
from evald.pipeline.bindings import MetricBinding
from evald.telemetry import RateLimitedLog, Telemetry
from evald.windowed.attributes import annotate
from evald.windowed.groups import GroupWindow, attribute_names, group_key
from evald.windowed.judged import GroupJudge
from evald.windowed.pairs import PairWindow, window_for
from evald.windowed.sliding import SlidingWindows, confidence_of

logger = logging.getLogger(__name__)

MAX_PENDING = 10_000
PENDING_AGE = 600.0


@dataclass(slots=True)
class _Pending:
    case: EvalCase
    started: float
    consumers: list[int]
    planned: frozenset[str]
    scores: dict[str, Score] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    fed: set[int] = field(default_factory=set)


class _Consumer:
    def __init__(self, binding: MetricBinding, waits: set[str]) -> None:
        self.binding, self.name, self.waits = binding, binding.metric.name, frozenset(waits)


def _outcome(options: OutcomeOptions, entry: _Pending) -> bool | None:
    if options.outcome_metric is None:
        return golden_outcome(entry.case)
    score = entry.scores.get(options.outcome_metric)
    return None if score is None else score.passed


class WindowedStage:
    """Multi-case metrics of one pipeline (see the module docstring)."""

    def __init__(self, bindings: Sequence[MetricBinding], telemetry: Telemetry, known: Sequence[str] = (), *,
                 max_pending: int = MAX_PENDING, pending_age: float = PENDING_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        ordered = sorted(bindings, key=lambda b: not isinstance(b.metric, CompositeMetric))  # composites first
        names = {*known, *(b.metric.name for b in ordered)}
        self._consumers: list[_Consumer] = []
        self._groups: dict[int, GroupWindow | PairWindow] = {}
        self._windows: dict[int, SlidingWindows] = {}
        attributes: dict[str, None] = {}
        for index, binding in enumerate(ordered):
            metric, waits = binding.metric, set[str]()
            if isinstance(metric, CompositeMetric):
                waits = set(metric.weights())
                if "weights" not in metric.options.model_fields_set:  # a preset's defaults: those configured
                    waits &= names
            elif isinstance(metric, GroupMetric):
                opts = cast(GroupOptions, metric.options)
                waits = {opts.outcome_metric} if metric.uses_outcome and opts.outcome_metric else set()
                attributes.update(dict.fromkeys(attribute_names(opts)))
                self._groups[index] = window_for(metric, self._dropper(metric.name))
            elif isinstance(metric, WindowMetric):
                wopts = cast(WindowOptions, metric.options)
                waits = {n for n in (wopts.outcome_metric, wopts.confidence_metric if wopts.confidence_from == "metric"
                                     else None) if n}
                if wopts.confidence_from == "attribute":
                    attributes[wopts.confidence_attribute] = None
                self._windows[index] = SlidingWindows(metric, self._dropper(metric.name))
            unknown = sorted(waits - names)
            if unknown:
                raise ValueError(f"metric {metric.name!r} refers to unknown metric(s): {', '.join(unknown)}")
            self._consumers.append(_Consumer(binding, waits))
        self.attribute_names = tuple(attributes)
        self._names = frozenset(c.name for c in self._consumers)
        self._composites = frozenset(c.name for c in self._consumers if isinstance(c.binding.metric, CompositeMetric))
        self._pending: OrderedDict[tuple[str, str | None, str], _Pending] = OrderedDict()
        self._max_pending, self._pending_age, self._clock = max_pending, pending_age, clock
        self._last_sweep = clock()
        self._log = RateLimitedLog(logger)
        r = telemetry.registry
        self._scored = Counter("evald_windowed_scores", "Scores computed over more than one case (groups, "
                               "composites), by metric.", ["metric"], registry=r)
        self._dropped = Counter("evald_windowed_dropped", "Cases a multi-case metric left out, by metric and reason.",
                                ["metric", "reason"], registry=r)
        self._window_score = Gauge("evald_window_score", "Latest value of a sliding-window metric (calibration, "
                                   "discrimination, brier_score) per service and model; unset while too few cases.",
                                   ["metric", "service_name", "model"], registry=r)
        self._window_cases = Gauge("evald_window_cases", "Cases in a sliding window.",
                                   ["metric", "service_name", "model"], registry=r)
        self.judge = GroupJudge(lambda name, reason, n: self._dropped.labels(name, reason).inc(n))
        self._pending_gauge = Gauge("evald_windowed_pending_cases", "Cases waiting for results a multi-case metric "
                                    "reads.", registry=r)

    @classmethod
    def split(cls, bindings: Sequence[MetricBinding],
              telemetry: Telemetry) -> tuple[WindowedStage | None, list[MetricBinding]]:
        """(the stage for the multi-case bindings, or None when there are none; the per-case bindings)."""
        multi = [b for b in bindings if is_multi_case(b.metric)]
        single = [b for b in bindings if not is_multi_case(b.metric)]
        if not multi:
            return None, single
        return cls(multi, telemetry, [b.metric.name for b in single]), single

    def applies_to(self, case: EvalCase) -> bool:
        return any(c.binding.applies_to(case) for c in self._consumers)

    def annotate(self, case: EvalCase, trace: AssembledTrace) -> EvalCase:
        return annotate(case, trace, self.attribute_names)

    # -- scored cases in -------------------------------------------------------------------------------------------

    def observe(self, batch: Sequence[ScoredCase]) -> list[ScoredCase]:
        """Take a batch of scored cases (or parts); the scored cases it completes (group scores, composites)."""
        out: list[ScoredCase] = []
        now = self._clock()
        for scored in batch:
            if scored.scores and all(s.name in self._names for s in scored.scores):
                continue  # its own results (an asynchronous group score comes back through the fan-out)
            try:
                self._observe_one(scored, now, out)
            except Exception as err:  # a bug here must never stop the export of the batch
                self._log.log(logging.ERROR, "windowed", "windowed stage failed on trace %s: %r", scored.trace_id,
                              err)
        if now - self._last_sweep >= 1.0:
            self._sweep(now)
        self._pending_gauge.set(len(self._pending))
        return out

    def _observe_one(self, scored: ScoredCase, now: float, out: list[ScoredCase]) -> None:
        case = scored.case
        key = (case.trace_id, case.span_id, case.scope)
        entry = self._pending.get(key)
        if entry is None:
            consumers = [i for i, c in enumerate(self._consumers) if c.binding.applies_to(case)]
            if not consumers:
                return
            planned = frozenset(scored.metric_dimensions) | {self._consumers[i].name for i in consumers
                                                             if self._consumers[i].name in self._composites}
            while len(self._pending) >= self._max_pending:
                self._drop_pending(self._pending.popitem(last=False)[1], "pending_evicted")
            entry = self._pending[key] = _Pending(case, now, consumers, planned)
        entry.case = case
        for score in scored.scores:
            entry.scores[score.name] = score
            entry.seen.add(score.name)
        entry.seen.update(name for name, _ in (*scored.skipped, *scored.errors))
        progress = True
        while progress:
            progress = False
            for index in entry.consumers:
                consumer = self._consumers[index]
                if index in entry.fed or not (consumer.waits & entry.planned) <= entry.seen:
                    continue
                entry.fed.add(index)
                progress = True
                self._feed(index, entry, now, out)
        if len(entry.fed) == len(entry.consumers):
            del self._pending[key]

    def _feed(self, index: int, entry: _Pending, now: float, out: list[ScoredCase]) -> None:
        consumer = self._consumers[index]
        metric = consumer.binding.metric
        try:
            if isinstance(metric, CompositeMetric):
                entry.seen.add(consumer.name)
                score = metric.combine(entry.scores)
                if score is None:
                    self._dropped.labels(consumer.name, "not_applicable").inc()
                    return
                entry.scores[consumer.name] = score
                out.append(self._scored_case(entry.case, score))
            elif isinstance(metric, GroupMetric):
                window = self._groups[index]
                outcome = _outcome(cast(OutcomeOptions, metric.options), entry) if metric.uses_outcome else None
                key = group_key(entry.case, cast(GroupOptions, metric.options))
                for runs, latest in window.add(entry.case, outcome, now, key):  # K runs, or pairs (pairs.py)
                    self._score_group(metric, runs, latest, out)
            elif isinstance(metric, WindowMetric):
                opts = cast(WindowOptions, metric.options)
                added = self._windows[index].add(entry.case, confidence_of(entry.case, entry.scores, opts),
                                                 _outcome(opts, entry), now)
                if added is not None:
                    self._publish(consumer.name, added[0], added[1], self._windows[index].size(added[0]))
        except Exception as err:
            self._dropped.labels(consumer.name, "error").inc()
            self._log.log(logging.WARNING, f"windowed:{consumer.name}", "metric %s failed: %s: %s", consumer.name,
                          type(err).__name__, err)

    def _score_group(self, metric: GroupMetric, runs: list[Run], latest: EvalCase, out: list[ScoredCase]) -> None:
        if metric.group_is_async:  # awaited in a task of its own (evald/windowed/judged.py), exported when done
            self.judge.start(metric, runs, latest, self._group_result)
            return
        score = metric.measure_group(runs)
        if score is None:
            self._dropped.labels(metric.name, "not_applicable").inc(len(runs))
            return
        out.append(self._group_result(metric, runs, latest, score))

    def _group_result(self, metric: GroupMetric, runs: list[Run], latest: EvalCase, score: Score) -> ScoredCase:
        key = group_key(latest, cast(GroupOptions, metric.options))
        metadata = {**score.metadata, "group": key, "runs": len(runs), "trace_ids": [r.case.trace_id for r in runs]}
        reason = f"group of {len(runs)} runs: {score.reason}"
        return self._scored_case(latest, new_score(score.name, score.value, score.threshold, reason, metadata,
                                                   score.dimension))

    def _scored_case(self, case: EvalCase, score: Score) -> ScoredCase:
        self._scored.labels(score.name).inc()
        return new_scored_case(case, (score,), (), (), {score.name: score.dimension.value})

    def _publish(self, name: str, key: tuple[str, str], score: Score | None, size: int) -> None:
        self._window_cases.labels(name, *key).set(size)
        if score is not None:
            self._window_score.labels(name, *key).set(score.value)

    # -- bounds and the end of a run -------------------------------------------------------------------------------

    def _sweep(self, now: float) -> None:
        self._last_sweep = now
        while self._pending:
            first = next(iter(self._pending.values()))
            if now - first.started <= self._pending_age:
                break
            self._drop_pending(self._pending.popitem(last=False)[1], "pending_expired")
        for window in self._groups.values():
            window.sweep(now)

    def _drop_pending(self, entry: _Pending, reason: str) -> None:
        for index in entry.consumers:
            if index not in entry.fed:
                self._dropped.labels(self._consumers[index].name, reason).inc()

    def _dropper(self, name: str) -> Callable[[str, int], None]:
        return lambda reason, n: self._dropped.labels(name, reason).inc(n)

    def flush(self) -> list[ScoredCase]:
        """Each sliding window's current value as a run-level result (on the window's latest case, ``metadata``
        ``run_level: true`` with the window's service_name, model and size); windows with too few cases give none."""
        out: list[ScoredCase] = []
        now = self._clock()
        for index, windows in self._windows.items():
            name = self._consumers[index].name
            for key, case, score, size in windows.results(now):
                self._publish(name, key, score, size)
                if score is None:
                    continue
                metadata = {**score.metadata, "run_level": True, "service_name": key[0], "model": key[1],
                            "window_cases": size}
                reason = f"run-level, window {key[0] or '-'}/{key[1] or '-'} of {size} cases: {score.reason}"
                out.append(self._scored_case(case, new_score(score.name, score.value, score.threshold, reason,
                                                             metadata, score.dimension)))
        return out
