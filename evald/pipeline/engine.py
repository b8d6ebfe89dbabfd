"""The evaluation pipeline: mapping -> sampling -> bounded case queue -> N workers -> exporters.

Config keys (``pipeline:``): ``workers`` (worker tasks, default 4), ``queue_size`` (cases waiting, default
10000), ``metric_timeout`` (per metric per case, default 30s), ``export_timeout`` (per exporter per export,
default 10s), ``shutdown_timeout`` (drain deadline on SIGTERM, default 10s).

Failure semantics: mapping is pure and cannot raise (the router turns mapper bugs into "not evaluable").
When the queue is full, ``on_trace`` waits: the assembly window keeps its traces and, once full, receivers
refuse new data with a retry hint (backpressure flows upward, nothing is dropped silently). Scoring and export
(evald/pipeline/workers.py): a case's cheap scores are exported at once, its judged ones when they exist; a
failing exporter is counted per exporter and reason and does not block the others.

Accounting: every case mapped from a sampled trace (``evald_cases_total``) ends as exactly one of: scored
(``evald_scored_cases_total``), sampled out (``evald_cases_sampled_out_total``), without any metric that applies
(``no_metric``, a plain count read by the shutdown totals) or dropped with a reason
(``evald_cases_dropped_total``). On shutdown, cases still queued after the deadline are dropped as ``shutdown``,
those in a worker or a judged task as ``shutdown_in_flight``, and the cases of a trace (or conversation) whose
queueing is cut short by the deadline as ``shutdown``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import fields
from operator import attrgetter

from pydantic import Field

from evald.assembly.completion import Completion
from evald.case import SPAN_END_METADATA, EvalCase
from evald.config.base import ComponentConfig, Duration
from evald.interfaces import Exporter
from evald.mapping.router import MapperRouter
from evald.metrics.base import BaseMetric
from evald.model import AssembledTrace
from evald.pipeline.bindings import MetricBinding
from evald.pipeline.case_queue import CaseQueue
from evald.pipeline.content_diagnosis import ContentDiagnosis
from evald.pipeline.conversations import ConversationTracker
from evald.pipeline.goldens import ReferenceResolver
from evald.pipeline.sampling import Sampler
from evald.pipeline.scoring import CaseScorer, MetricPlan
from evald.pipeline.workers import SHUTDOWN, ScoringStage, Work, new_work
from evald.telemetry import LabelCache, LabelSetCache, RateLimitedLog, Telemetry
from evald.windowed.stage import WindowedStage

logger = logging.getLogger(__name__)


class PipelineConfig(ComponentConfig):
    workers: int = Field(4, gt=0, le=1024, description="Worker tasks scoring cases concurrently.")
    queue_size: int = Field(10_000, gt=0, description="Cases waiting for a worker; when full, backpressure flows up.")
    metric_timeout: Duration = Field(30.0, description="Deadline per metric per case; past it the outcome is `error`.")
    export_timeout: Duration = Field(10.0, description="Deadline per exporter per batch of scores.")
    shutdown_timeout: Duration = Field(10.0, description="Drain deadline on SIGTERM; work left is dropped and counted.")


_MAX_PLANS = 4096  # distinct (scope, service, model, provider) keys before the plan cache starts over


def _with_trace_facts(case: EvalCase, trace: AssembledTrace) -> EvalCase:
    """``case`` with the facts exporters need that only the trace knows, or ``case`` itself when none applies (the
    usual case: no dict, no copy): the evaluated span's end time (a stable event time, so a re-delivered evaluation
    upserts with the same timestamp; the built-in mappers set it themselves, so only other mappers' cases need it)
    and the revision of a re-evaluated trace."""
    needs_end = bool(case.span_id) and SPAN_END_METADATA not in case.metadata
    if not needs_end and trace.revision <= 1:
        return case
    facts: dict[str, int] = {}
    if needs_end:
        end = next((s.end_time_unix_nano for s in trace.spans if s.span_id == case.span_id), 0)
        if end > 0:
            facts[SPAN_END_METADATA] = end
    if trace.revision > 1:  # late spans re-evaluated the trace: these scores supersede the earlier ones
        facts["revision"] = trace.revision
    return _with_facts(case, facts)


_FIELDS = [f.name for f in fields(EvalCase) if f.init]
_META = _FIELDS.index("metadata")
_BEFORE_META, _AFTER_META = attrgetter(*_FIELDS[:_META]), attrgetter(*_FIELDS[_META + 1:])


def _with_facts(case: EvalCase, facts: dict[str, int]) -> EvalCase:
    """``replace(case, metadata={**case.metadata, **facts})`` at half the cost: the fields are read by two C-level
    getters and passed positionally, instead of replace()'s per-call field walk (``case`` itself when no fact)."""
    if not facts:
        return case
    return EvalCase(*_BEFORE_META(case), {**case.metadata, **facts}, *_AFTER_META(case))  # type: ignore[call-arg]


class EvaluationPipeline:
    def __init__(
        self,
        config: PipelineConfig,
        router: MapperRouter,
        sampler: Sampler,
        bindings: Sequence[MetricBinding],
        exporters: Sequence[Exporter],
        telemetry: Telemetry,
        references: ReferenceResolver | None = None,
        conversations: ConversationTracker | None = None,
        *,
        split_judged: bool = True,
    ) -> None:
        self._cfg = config
        self._references = references or ReferenceResolver()
        self._conversations = conversations
        self._sweeper: asyncio.Task[None] | None = None
        self._router = router
        self._sampler = sampler
        # multi-case metrics (groups, windows, composites) are the windowed stage's, never the scorer's
        self._windowed, self._bindings = WindowedStage.split(bindings, telemetry)
        self._tm = telemetry
        self._diagnosis = ContentDiagnosis(telemetry)
        self._scorer = CaseScorer(  # metrics with per-metric sampling/when are checked; the others cost nothing more
            telemetry, config.metric_timeout, gated=any(b.gate is not None for b in self._bindings))
        self._queue: asyncio.Queue[Work] = CaseQueue(config.queue_size, telemetry.queue_wait.observe)
        self._stage = ScoringStage(self._queue, self._scorer, exporters, telemetry, workers=config.workers,
                                   export_timeout=config.export_timeout, split=split_judged, windowed=self._windowed)
        if self._windowed is not None:  # asynchronous group metrics export their scores when they exist
            self._windowed.judge.bind(self._stage.fan_out, config.metric_timeout)
        self._dropped = LabelCache(telemetry.cases_dropped)
        self._ignored = LabelCache(telemetry.traces_ignored)
        self._not_evaluable = LabelSetCache(telemetry.not_evaluable)
        #: cases mapped (and counted in evald_cases_total) to which no metric applies
        self.no_metric = 0
        self._log = RateLimitedLog(logger)
        self._closed = False
        telemetry.queue_capacity.set(config.queue_size)
        telemetry.queue_size.set_function(self._queue.qsize)  # read at scrape time, not on every put/get
        self._case_counters = LabelCache(telemetry.cases)
        self._sampled_out_counters = LabelCache(telemetry.cases_sampled_out)
        self._plans: dict[tuple[str, str | None, str | None, str | None], MetricPlan | None] = {}

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    # -- intake from the assembly window ------------------------------------------------------------------------

    async def on_trace(self, trace: AssembledTrace, completion: Completion) -> None:
        cases: tuple[EvalCase, ...] = ()
        counted = settled = 0  # cases counted in evald_cases_total / accounted for (see the module docstring)
        try:
            result = self._router.map(trace)
            if not result.cases and not result.not_evaluable:
                self._ignored.get("no_genai_spans").inc()
                return
            for item in result.not_evaluable:
                self._not_evaluable.get(item.reason, item.convention, item.scope).inc()
                self._log.log(
                    logging.INFO, f"ne:{item.convention}:{item.reason}",
                    "not evaluable (%s, %s, %s): trace %s %s", item.convention, item.scope, item.reason,
                    trace.trace_id, item.detail,
                )
            self._diagnosis.observe_all(result.cases)
            if not self._sampler.sampled(trace.trace_id):
                for case in result.cases:
                    self._case_counters.get(case.scope).inc()
                    self._sampled_out_counters.get(case.scope).inc()
                return
            references = self._references
            annotated = references.annotated_spans(trace)  # per trace, not per case
            resolve = bool(annotated) or references.has_goldens  # else resolve() returns every case as it is
            queue = self._queue
            cases = result.cases
            for case in cases:
                self._case_counters.get(case.scope).inc()
                counted += 1
                # bindings depend on scope and service/model/provider only, which enrichment does not change
                plan = self._plan_for(case)
                if plan is None and (self._conversations is None or case.scope != "trace"):
                    self.no_metric += 1  # nothing to score, and not a conversation turn (only trace cases are)
                    settled += 1
                    continue
                if resolve:
                    case = references.resolve(case, trace, annotated)
                case = _with_trace_facts(case, trace)
                if self._windowed is not None:
                    case = self._windowed.annotate(case, trace)
                if self._conversations is not None:
                    await self._submit_all(self._conversations.add(case, trace))
                if plan is None:
                    self.no_metric += 1
                    settled += 1
                    continue
                completion.hold()
                work = new_work(case, plan, completion)
                try:
                    queue.put_nowait(work)  # no coroutine per case while there is room
                except asyncio.QueueFull:  # wait for room (backpressure)
                    try:
                        await queue.put(work)
                    except asyncio.CancelledError:
                        completion.release()
                        raise
                settled += 1
        except asyncio.CancelledError:  # the shutdown deadline cut the trace short: count what was not queued
            self._count_unqueued(cases[settled:], counted - settled)
            raise
        finally:
            completion.release()

    def _count_unqueued(self, cases: Sequence[EvalCase], already_counted: int) -> None:
        """Cases of a trace or conversation batch that will never be queued: dropped (shutdown), or without metric.
        The first ``already_counted`` of them are in evald_cases_total already."""
        for i, case in enumerate(cases):
            if i >= already_counted:
                self._case_counters.get(case.scope).inc()
            if self._plan_for(case) is None:
                self.no_metric += 1
            else:
                self._dropped.get(SHUTDOWN).inc()

    def _plan_for(self, case: EvalCase) -> MetricPlan | None:
        """The metrics that apply to the case (None: none), planned once per scope/service/model/provider; the
        cache is cleared when a flood of distinct values fills it (it holds no state worth keeping)."""
        key = (case.scope, case.service_name, case.model, case.provider)
        try:
            return self._plans[key]
        except KeyError:
            pass
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
        bindings = [b for b in self._bindings if b.applies_to(case)]
        scored = bindings or (self._windowed is not None and self._windowed.applies_to(case))
        plan = self._plans[key] = self._scorer.plan(bindings) if scored else None
        return plan

    # -- workers ------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._stage.start()
        if self._conversations is not None:
            self._sweeper = asyncio.create_task(self._sweep_conversations(), name="evald:conversations")

    async def _submit_all(self, cases: Sequence[EvalCase]) -> None:
        """Queue cases no source acknowledgement waits for (conversation cases), in order; if cancelled, the ones
        not queued are counted (dropped, shutdown)."""
        for i, case in enumerate(cases):
            plan = self._plan_for(case)
            self._case_counters.get(case.scope).inc()
            if plan is None:
                self.no_metric += 1
                continue
            try:
                await self._queue.put(new_work(case, plan, Completion([])))
            except asyncio.CancelledError:
                self._count_unqueued(cases[i:], 1)
                raise

    async def _sweep_conversations(self) -> None:
        assert self._conversations is not None
        while True:
            await asyncio.sleep(1.0)
            await self._submit_all(self._conversations.due())

    async def flush_conversations(self, timeout: float | None = None) -> None:
        """Evaluate every open conversation now (shutdown, end of a replay); what cannot be queued within
        ``timeout`` is counted as dropped (shutdown)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._conversations is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._submit_all(self._conversations.flush())

    async def drain(self, timeout: float) -> bool:
        """Wait until every queued case is scored and exported; False if the deadline passed first."""
        return await self._stage.drain(timeout)

    async def shutdown(self, timeout: float) -> None:
        """Flush conversations, drain, then drop and count what is left, all within ``timeout`` (plus at most half
        a second for cancelled workers to count what they held); metrics are closed within one more second."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await self.flush_conversations(timeout)
        await self._stage.stop(max(0.0, deadline - loop.time()))
        if self._windowed is not None:  # groups still awaited, then the sliding windows' values as run-level results
            await self._windowed.judge.drain(max(0.1, deadline - loop.time()))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.1, deadline - loop.time())):
                    await self._stage.fan_out(self._windowed.flush())
        metrics = list({id(b.metric): b.metric for b in self._bindings}.values())
        results = await asyncio.gather(*(_close(m) for m in metrics), return_exceptions=True)
        for metric, result in zip(metrics, results, strict=True):
            if isinstance(result, BaseException):  # closing must not stop the rest of the shutdown
                logger.warning("metric %s did not close cleanly: %r", metric.name, result)


async def _close(metric: BaseMetric) -> None:
    async with asyncio.timeout(1.0):
        await metric.aclose()
