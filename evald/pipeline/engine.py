"""The evaluation pipeline: mapping -> sampling -> bounded case queue -> N workers -> exporters.

Config keys (``pipeline:``): ``workers`` (worker tasks, default 4), ``queue_size`` (cases waiting, default
10000), ``metric_timeout`` (per metric per case, default 30s), ``export_timeout`` (per exporter per batch,
default 10s), ``shutdown_timeout`` (drain deadline on SIGTERM, default 10s).

Failure semantics: mapping is pure and cannot raise (the router turns mapper bugs into "not evaluable").
When the queue is full, ``on_trace`` waits: the assembly window keeps its traces and, once full, receivers
refuse new data with a retry hint (backpressure flows upward, nothing is dropped silently). A failing exporter
is counted per exporter and reason and does not block the others. On shutdown, work still queued after the
deadline is dropped and counted as ``evald_cases_dropped_total{reason="shutdown"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, fields
from operator import attrgetter

from pydantic import Field

from evald.assembly.completion import Completion
from evald.case import SPAN_END_METADATA, EvalCase
from evald.config.base import ComponentConfig, Duration
from evald.exporters.acks import export_ack
from evald.interfaces import Exporter
from evald.mapping.router import MapperRouter
from evald.model import AssembledTrace, Delivery, ScoredCase
from evald.pipeline.bindings import MetricBinding
from evald.pipeline.case_queue import CaseQueue
from evald.pipeline.content_diagnosis import ContentDiagnosis
from evald.pipeline.conversations import ConversationTracker
from evald.pipeline.goldens import ReferenceResolver
from evald.pipeline.sampling import Sampler
from evald.pipeline.scoring import CaseScorer, MetricPlan
from evald.telemetry import LabelCache, RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)


class PipelineConfig(ComponentConfig):
    workers: int = Field(4, gt=0, le=1024, description="Worker tasks scoring cases concurrently.")
    queue_size: int = Field(10_000, gt=0, description="Cases waiting for a worker; when full, backpressure flows up.")
    metric_timeout: Duration = Field(30.0, description="Deadline per metric per case; past it the outcome is `error`.")
    export_timeout: Duration = Field(10.0, description="Deadline per exporter per batch of scores.")
    shutdown_timeout: Duration = Field(10.0, description="Drain deadline on SIGTERM; work left is dropped and counted.")


#: Most cases a worker takes from the queue at once; their scores go to the exporters as one batch.
_MAX_BATCH = 64
_MAX_PLANS = 4096  # distinct (scope, service, model, provider) keys before the plan cache starts over


@dataclass(slots=True)
class _Work:
    case: EvalCase
    plan: MetricPlan
    completion: Completion


def _case_facts(case: EvalCase, trace: AssembledTrace) -> dict[str, int]:
    """Facts exporters need that only the trace knows: the evaluated span's end time (a stable event time, so a
    re-delivered evaluation upserts with the same timestamp; the built-in mappers set it themselves, so the case is
    copied only for other mappers and for re-evaluated traces) and the revision of a re-evaluated trace."""
    facts: dict[str, int] = {}
    if case.span_id and SPAN_END_METADATA not in case.metadata:
        end = next((s.end_time_unix_nano for s in trace.spans if s.span_id == case.span_id), 0)
        if end > 0:
            facts[SPAN_END_METADATA] = end
    if trace.revision > 1:  # late spans re-evaluated the trace: these scores supersede the earlier ones
        facts["revision"] = trace.revision
    return facts


_FIELDS = [f.name for f in fields(EvalCase) if f.init]
_META = _FIELDS.index("metadata")
_BEFORE_META, _AFTER_META = attrgetter(*_FIELDS[:_META]), attrgetter(*_FIELDS[_META + 1:])


def _with_facts(case: EvalCase, facts: dict[str, int]) -> EvalCase:
    """``replace(case, metadata={**case.metadata, **facts})`` at half the cost (this runs for every case): the
    fields are read by two C-level getters and passed positionally, instead of replace()'s per-call field walk."""
    return EvalCase(*_BEFORE_META(case), {**case.metadata, **facts}, *_AFTER_META(case))  # type: ignore[call-arg]


def _release_all(batch: list[_Work]) -> None:
    for work in batch:
        work.completion.release()


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
    ) -> None:
        self._cfg = config
        self._references = references or ReferenceResolver()
        self._conversations = conversations
        self._sweeper: asyncio.Task[None] | None = None
        self._router = router
        self._sampler = sampler
        self._bindings = list(bindings)
        self._any_async = any(b.metric.is_async for b in self._bindings)  # else batches need no async check
        self._exporters = list(exporters)
        self._tm = telemetry
        self._diagnosis = ContentDiagnosis(telemetry)
        self._scorer = CaseScorer(  # metrics with per-metric sampling/when are checked; the others cost nothing more
            telemetry, config.metric_timeout, gated=any(b.gate is not None for b in self._bindings))
        self._queue: asyncio.Queue[_Work] = CaseQueue(config.queue_size, telemetry.queue_wait.observe)
        self._workers: list[asyncio.Task[None]] = []
        self._log = RateLimitedLog(logger)
        self._closed = False
        telemetry.queue_capacity.set(config.queue_size)
        telemetry.queue_size.set_function(self._queue.qsize)  # read at scrape time, not on every put/get
        self._case_counters = LabelCache(telemetry.cases)
        self._scored_counters = LabelCache(telemetry.scored_cases)
        self._sampled_out_counters = LabelCache(telemetry.cases_sampled_out)
        self._plans: dict[tuple[str, str | None, str | None, str | None], MetricPlan | None] = {}

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    # -- intake from the assembly window ------------------------------------------------------------------------

    async def on_trace(self, trace: AssembledTrace, completion: Completion) -> None:
        try:
            result = self._router.map(trace)
            if not result.cases and not result.not_evaluable:
                self._tm.traces_ignored.labels("no_genai_spans").inc()
                return
            for item in result.not_evaluable:
                self._tm.not_evaluable.labels(item.reason, item.convention, item.scope).inc()
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
            annotated = self._references.annotated_spans(trace)  # per trace, not per case
            for case in result.cases:
                self._case_counters.get(case.scope).inc()
                # bindings depend on scope and service/model/provider only, which enrichment does not change
                plan = self._plan_for(case)
                if plan is None and (self._conversations is None or case.scope != "trace"):
                    continue  # nothing to score, and not a conversation turn (only trace cases are)
                case = self._references.resolve(case, trace, annotated)
                extra = _case_facts(case, trace)
                if extra:
                    case = _with_facts(case, extra)
                if self._conversations is not None:
                    for evicted in self._conversations.add(case, trace):
                        await self._submit_detached(evicted)
                if plan is None:
                    continue
                completion.hold()
                if self._queue.full():  # wait for room (backpressure); else no coroutine per case
                    await self._queue.put(_Work(case, plan, completion))
                else:
                    self._queue.put_nowait(_Work(case, plan, completion))
        finally:
            completion.release()

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
        plan = self._plans[key] = self._scorer.plan(bindings) if bindings else None
        return plan

    # -- workers ------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        for i in range(self._cfg.workers):
            self._workers.append(asyncio.create_task(self._work_loop(), name=f"evald:worker-{i}"))
        if self._conversations is not None:
            self._sweeper = asyncio.create_task(self._sweep_conversations(), name="evald:conversations")

    async def _submit_detached(self, case: EvalCase) -> None:
        """Queue a case no source acknowledgement waits for (conversation cases)."""
        self._case_counters.get(case.scope).inc()
        if (plan := self._plan_for(case)) is not None:
            await self._queue.put(_Work(case, plan, Completion([])))

    async def _sweep_conversations(self) -> None:
        assert self._conversations is not None
        while True:
            await asyncio.sleep(1.0)
            for case in self._conversations.due():
                await self._submit_detached(case)

    async def flush_conversations(self) -> None:
        """Evaluate every open conversation now (shutdown, end of a replay)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._conversations is not None:
            for case in self._conversations.flush():
                await self._submit_detached(case)

    async def _work_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < _MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            # exporters that send later hold this until their scores are delivered (evald/exporters/acks.py)
            ack = Delivery(functools.partial(_release_all, batch))
            token = export_ack.set(ack)
            try:
                await self._fan_out(await self._score_batch(batch))
            except Exception:  # never let a worker die
                self._tm.cases_dropped.labels("worker_error").inc(len(batch))
                logger.exception("worker failed on a batch of %d cases", len(batch))
            finally:
                export_ack.reset(token)
                ack.seal()
                for _ in batch:
                    self._queue.task_done()

    async def _score_batch(self, batch: list[_Work]) -> list[ScoredCase]:
        """Score what is queued together; cases with async metrics (judges) are scored concurrently."""
        results: list[ScoredCase | BaseException]
        if self._any_async and any(work.plan.has_async for work in batch):
            results = await asyncio.gather(
                *(self._scorer.score(w.case, w.plan) for w in batch), return_exceptions=True
            )
        else:
            results = []
            for work in batch:
                try:
                    results.append(self._scorer.score_inline(work.case, work.plan) if work.plan.inline
                                   else await self._scorer.score(work.case, work.plan))
                except Exception as err:
                    results.append(err)
        scored: list[ScoredCase] = []
        per_scope: dict[str, int] = {}  # counted once per batch (a counter increment takes a lock)
        for work, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                self._tm.cases_dropped.labels("worker_error").inc()
                self._log.log(logging.ERROR, "score-bug", "scoring failed on a case of trace %s: %r",
                              work.case.trace_id, result)
                continue
            per_scope[work.case.scope] = per_scope.get(work.case.scope, 0) + 1
            scored.append(result)
        for scope, n in per_scope.items():
            self._scored_counters.get(scope).inc(n)
        return scored

    async def _fan_out(self, batch: Sequence[ScoredCase]) -> None:
        if not batch:
            return
        for exporter in self._exporters:
            # an exporter whose full queue makes export() wait (block_on_overflow) is backpressure, not a hang
            timeout = None if getattr(exporter, "waits_for_room", False) else self._cfg.export_timeout
            try:
                async with asyncio.timeout(timeout):
                    await exporter.export(batch)
            except TimeoutError:
                self._tm.export_failures.labels(exporter.id, "timeout").inc()
                self._log.log(logging.WARNING, f"exp-timeout:{exporter.id}", "exporter %s timed out", exporter.id)
            except Exception as err:
                self._tm.export_failures.labels(exporter.id, type(err).__name__).inc()
                self._log.log(
                    logging.WARNING, f"exp:{exporter.id}", "exporter %s failed: %s", exporter.id, err
                )

    async def drain(self, timeout: float) -> bool:
        """Wait until every queued case is scored and exported; False if the deadline passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._queue.join()
            return True
        except TimeoutError:
            return False

    async def shutdown(self, timeout: float) -> None:
        if self._closed:
            return
        self._closed = True
        await self.flush_conversations()
        await self.drain(timeout)
        for task in self._workers:
            task.cancel()
        for task in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while not self._queue.empty():
            work = self._queue.get_nowait()
            self._tm.cases_dropped.labels("shutdown").inc()
            work.completion.release()
            self._queue.task_done()
        for metric in {id(b.metric): b.metric for b in self._bindings}.values():
            try:
                async with asyncio.timeout(1.0):
                    await metric.aclose()
            except Exception as err:  # closing must not stop the rest of the shutdown
                logger.warning("metric %s did not close cleanly: %s", metric.name, err)
