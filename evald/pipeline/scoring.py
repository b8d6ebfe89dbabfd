"""Run a case's metrics; exceptions are caught, counted and reported as errors.

Synchronous metrics (those implementing only ``measure()``) run inline: they are cheap by contract and an
asyncio timeout could not interrupt them anyway. Asynchronous metrics (``a_measure()``, e.g. LLM judges) of one
case run concurrently, each under its own ``metric_timeout``.

Before a metric runs, the fields it ``needs`` are checked (evald/metrics/requirements.py): an absent one (content
not recorded or masked, no golden for ``expected``...) makes it "skipped" with reason ``missing_<field>``, never a
0 or a fail. A metric returning ``None`` is "skipped" with reason ``not_applicable``, never a 0 score; one raising
``MetricSkipped(reason)`` (e.g. a judge out of budget) is skipped with that reason. A metric that raises anything
else or times out is an "error" outcome with a short reason; it never becomes a score and never stops the others.

A binding with a gate (per-metric ``sampling`` or ``when``, evald/pipeline/conditions.py) is checked just before
its metric would run, against the scores of the metrics already run on the case (synchronous first, then waves of
asynchronous ones); a gated-out metric is skipped with reason ``sampled_out`` or ``condition_not_met``.
``gated=False`` (no binding has a gate) keeps the plain path free of any check.

``begin(case, plan)`` runs what needs no waiting (the synchronous metrics; with gates, every wave up to the first
asynchronous one) and returns those outcomes as a partial ``ScoredCase`` (None if there are none) with a
``Remainder``; ``finish(case, plan, remainder)`` runs the rest and returns only the outcomes it produced. The two
parts hold disjoint metric names, so the pipeline can export a case's cheap scores before its judged ones.

``plan(bindings)`` prepares what scoring a kind of case needs once (metric list, dimensions, bound duration
histograms, whether anything is asynchronous or gated); the pipeline keeps one plan per kind of case and scores
with it, so a case of synchronous, ungated metrics is scored in one inline pass (``score_inline``). ``score``
also accepts a plain list of bindings (plans it on the fly). ``score_inline`` adds up its ``missing_*`` and
``not_applicable`` skips and ``flush_skips()`` adds them to ``evald_metric_skips_total``: the workers call it once
per batch (a case usually skips several metrics, and each counter increment takes a lock); ``score`` calls it itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evald.case import EvalCase, Score
from evald.metrics.base import BaseMetric
from evald.metrics.remote import MetricSkipped
from evald.metrics.requirements import missing_field, requirement_check
from evald.model import ScoredCase, new_scored_case
from evald.pipeline.bindings import MetricBinding
from evald.telemetry import LabelCache, RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)

_Outcome = tuple[Score | None, str | None]  # (result, error reason)
_NOT_APPLICABLE = "not_applicable"
_MISSING = "missing_"  # + the absent field a metric needs: missing_input, missing_expected, ...


class _Skip(str):
    """An error-slot value that is really a deliberate skip: ``(None, _Skip(reason))``."""


@dataclass(slots=True)
class Remainder:
    """What ``CaseScorer.begin`` left to run: the asynchronous metrics (plan indices) to await next and, for gated
    plans, the scores so far, the evaluation order and where in it the next wave starts."""

    pending: list[int]
    scores: dict[str, Score] | None  # None: ungated, nothing runs after ``pending``
    order: list[int]
    start: int = 0


class MetricPlan:
    """The bindings that apply to one kind of case, prepared once (see the module docstring)."""

    __slots__ = ("bindings", "metrics", "dimensions", "has_async", "inline", "steps")

    def __init__(self, bindings: Sequence[MetricBinding], durations: LabelCache, gated: bool) -> None:
        self.bindings = tuple(bindings)
        self.metrics = tuple(b.metric for b in self.bindings)
        #: metric name -> dimension, shared by every ScoredCase of this plan (exporters only read it)
        self.dimensions = {m.name: m.dimension.value for m in self.metrics}
        self.has_async = any(m.is_async for m in self.metrics)
        #: no asynchronous metric and no gate: score_inline applies
        self.inline = not self.has_async and not (gated and any(b.gate is not None for b in self.bindings))
        #: (metric, name, its duration histogram, its requirement check or None), in order
        self.steps = tuple((m, m.name, durations.get(m.name), requirement_check(m.required_fields()))
                           for m in self.metrics)


class CaseScorer:
    def __init__(self, telemetry: Telemetry, metric_timeout: float, *, gated: bool = True) -> None:
        self._tm = telemetry
        self._timeout = metric_timeout
        self._gated = gated
        self._log = RateLimitedLog(logger)
        self._durations = LabelCache(telemetry.metric_duration)  # metric name -> bound child (labels() is not free)
        self._skips: dict[tuple[str, str], Any] = {}  # (metric, reason) -> bound counter child
        #: skips counted by score_inline and not yet added to the counter (flush_skips: a counter increment takes a
        #: lock, and a case often skips several metrics)
        self._unflushed: dict[tuple[str, str], int] = {}

    def plan(self, bindings: Sequence[MetricBinding]) -> MetricPlan:
        return MetricPlan(bindings, self._durations, self._gated)

    def score_inline(self, case: EvalCase, plan: MetricPlan) -> ScoredCase:
        """``score`` for a plan whose metrics are all synchronous and ungated, in one pass (the common case)."""
        scores: list[Score] = []
        skipped: list[tuple[str, str]] = []
        errors: list[tuple[str, str]] = []
        unflushed = self._unflushed
        clock = time.perf_counter
        now = clock()  # one clock read per metric: its end is the next one's start
        for metric, name, duration, check in plan.steps:
            if check is not None and (missing := check(case)) is not None:
                skipped.append(key := (name, _MISSING + missing))  # the reason and its counter's key
                unflushed[key] = unflushed.get(key, 0) + 1
                continue
            started = now
            try:
                result = metric.measure(case)
            except MetricSkipped as skip:
                now = clock()
                duration.observe(now - started)
                skipped.append((name, skip.reason))
                self._count_skip(name, skip.reason)
                continue
            except Exception as err:  # a metric bug must never take the daemon down
                errors.append((name, self._failed(metric, err, started)[1] or ""))
                now = clock()
                continue
            now = clock()
            duration.observe(now - started)
            if result is None:
                skipped.append(key := (name, _NOT_APPLICABLE))
                unflushed[key] = unflushed.get(key, 0) + 1
            elif isinstance(result, Score):
                scores.append(result)
            else:
                errors.append((name, self._checked(metric, result)[1] or ""))
        return new_scored_case(case, tuple(scores), tuple(skipped) if skipped else (),
                               tuple(errors) if errors else (), plan.dimensions)

    async def score(self, case: EvalCase, bindings: Sequence[MetricBinding] | MetricPlan) -> ScoredCase:
        plan = bindings if isinstance(bindings, MetricPlan) else self.plan(bindings)
        if plan.inline:
            scored = self.score_inline(case, plan)
            self.flush_skips()
            return scored
        outcomes: dict[int, _Outcome] = {}
        remainder = self._start(case, plan, outcomes)
        await self._continue(case, plan, remainder, outcomes)
        return self._assemble(case, plan, outcomes)

    def begin(self, case: EvalCase, plan: MetricPlan) -> tuple[ScoredCase | None, Remainder]:
        """Run what needs no waiting; the outcomes so far (None: none) and what ``finish`` must still run."""
        outcomes: dict[int, _Outcome] = {}
        remainder = self._start(case, plan, outcomes)
        return (self._assemble(case, plan, outcomes) if outcomes else None), remainder

    async def finish(self, case: EvalCase, plan: MetricPlan, remainder: Remainder) -> ScoredCase:
        """Run what ``begin`` left; the result holds only the metrics run here."""
        outcomes: dict[int, _Outcome] = {}
        await self._continue(case, plan, remainder, outcomes)
        return self._assemble(case, plan, outcomes)

    def _start(self, case: EvalCase, plan: MetricPlan, outcomes: dict[int, _Outcome]) -> Remainder:
        if self._gated and any(b.gate is not None for b in plan.bindings):
            bindings = plan.bindings
            remainder = Remainder([], {}, sorted(range(len(bindings)), key=lambda k: bindings[k].order))
            remainder.pending = self._gated_waves(case, bindings, outcomes, remainder)
            return remainder
        pending: list[int] = []
        for i, metric in enumerate(plan.metrics):
            if metric.is_async:
                pending.append(i)
            else:
                outcomes[i] = self._run_sync(metric, case)
        return Remainder(pending, None, [])

    async def _continue(
        self, case: EvalCase, plan: MetricPlan, remainder: Remainder, outcomes: dict[int, _Outcome]
    ) -> None:
        bindings, pending = plan.bindings, remainder.pending
        while pending:
            if len(pending) == 1:
                results = [await self._run_async(bindings[pending[0]].metric, case)]
            else:
                results = list(await asyncio.gather(*(self._run_async(bindings[i].metric, case) for i in pending)))
            for i, outcome in zip(pending, results, strict=True):
                outcomes[i] = outcome
                if remainder.scores is not None and outcome[0] is not None:
                    remainder.scores[bindings[i].metric.name] = outcome[0]
            pending = [] if remainder.scores is None else self._gated_waves(case, bindings, outcomes, remainder)
        remainder.pending = []

    def _assemble(self, case: EvalCase, plan: MetricPlan, outcomes: dict[int, _Outcome]) -> ScoredCase:
        scores: list[Score] = []
        skipped: list[tuple[str, str]] = []
        errors: list[tuple[str, str]] = []
        for i, metric in enumerate(plan.metrics):
            if (outcome := outcomes.get(i)) is None:
                continue
            result, error = outcome
            if isinstance(error, _Skip):
                skipped.append((metric.name, str(error)))
                self._count_skip(metric.name, str(error))
            elif error is not None:
                errors.append((metric.name, error))
            elif result is None:
                skipped.append((metric.name, _NOT_APPLICABLE))
                self._count_skip(metric.name, _NOT_APPLICABLE)
            else:
                scores.append(result)
        return new_scored_case(case, tuple(scores), tuple(skipped), tuple(errors), plan.dimensions)

    def _gated_waves(
        self, case: EvalCase, bindings: Sequence[MetricBinding], outcomes: dict[int, _Outcome], at: Remainder
    ) -> list[int]:
        """Run waves from ``at.start`` (sync metrics of a wave inline, each gate checked against the scores so far)
        until one has asynchronous metrics to await: returns their indices (empty when every wave ran)."""
        assert at.scores is not None
        scores, order = at.scores, at.order
        while at.start < len(order):
            wave = bindings[order[at.start]].wave
            pending: list[int] = []
            while at.start < len(order) and bindings[order[at.start]].wave == wave:
                i = order[at.start]
                at.start += 1
                binding = bindings[i]
                reason = binding.gate.blocked(case, scores) if binding.gate is not None else None
                if reason is not None:
                    outcomes[i] = (None, _Skip(reason))
                elif binding.metric.is_async:
                    pending.append(i)
                else:
                    outcomes[i] = self._run_sync(binding.metric, case)
                    if (result := outcomes[i][0]) is not None:
                        scores[binding.metric.name] = result
            if pending:
                return pending
        return []

    def _run_sync(self, metric: BaseMetric, case: EvalCase) -> _Outcome:
        if (missing := _missing(metric, case)) is not None:
            return None, _Skip(_MISSING + missing)
        started = time.perf_counter()
        try:
            result = metric.measure(case)
        except MetricSkipped as skip:
            self._observe(metric.name, started)
            return None, _Skip(skip.reason)
        except Exception as err:  # a metric bug must never take the daemon down
            return self._failed(metric, err, started)
        self._observe(metric.name, started)
        return self._checked(metric, result)

    async def _run_async(self, metric: BaseMetric, case: EvalCase) -> _Outcome:
        if (missing := _missing(metric, case)) is not None:
            return None, _Skip(_MISSING + missing)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._timeout):
                result = await metric.a_measure(case)
        except TimeoutError:
            self._observe(metric.name, started)
            self._tm.metric_errors.labels(metric.name, "timeout").inc()
            self._log.log(logging.WARNING, f"timeout:{metric.name}", "metric %s timed out", metric.name)
            return None, f"timed out after {self._timeout:g}s"
        except MetricSkipped as skip:
            self._observe(metric.name, started)
            return None, _Skip(skip.reason)
        except Exception as err:
            return self._failed(metric, err, started)
        self._observe(metric.name, started)
        return self._checked(metric, result)

    def _failed(self, metric: BaseMetric, err: Exception, started: float) -> _Outcome:
        self._observe(metric.name, started)
        self._tm.metric_errors.labels(metric.name, "exception").inc()
        self._log.log(
            logging.WARNING, f"exc:{metric.name}", "metric %s failed: %s: %s", metric.name, type(err).__name__, err
        )
        return None, f"{type(err).__name__}: {err}"[:300]

    def _checked(self, metric: BaseMetric, result: object) -> _Outcome:
        if result is None or isinstance(result, Score):
            return result, None
        self._tm.metric_errors.labels(metric.name, "bad_result").inc()
        return None, f"returned {type(result).__name__}, not Score or None"

    def flush_skips(self) -> None:
        """Add the skips ``score_inline`` counted since the last call to ``evald_metric_skips_total`` (its caller
        calls this once per batch; ``score`` calls it itself)."""
        if self._unflushed:
            for key, n in self._unflushed.items():
                (self._skips.get(key) or self._skip_child(key)).inc(n)
            self._unflushed.clear()

    def _count_skip(self, name: str, reason: str) -> None:
        key = (name, reason)
        (self._skips.get(key) or self._skip_child(key)).inc()

    def _skip_child(self, key: tuple[str, str]) -> Any:
        """The bound child of evald_metric_skips_total for (metric, reason), made once."""
        child = self._skips[key] = self._tm.metric_skips.labels(*key)
        return child

    def _observe(self, name: str, started: float) -> None:
        self._durations.get(name).observe(time.perf_counter() - started)


def _missing(metric: BaseMetric, case: EvalCase) -> str | None:
    needs = metric.required_fields()
    return missing_field(case, needs) if needs else None
