"""The scoring stage: ``pipeline.workers`` tasks take cases from the bounded queue, score them and hand the scores to
the exporters; cases with asynchronous metrics (judges, webhooks) finish in tasks of their own.

A worker takes up to 64 queued cases at once. Cases whose metrics are all synchronous are scored inline and
exported together at once. For a case with asynchronous metrics the worker runs its synchronous metrics, exports
those scores with the batch (``split``, the daemon's default; ``evald replay`` turns it off to keep one record per
case), and hands the asynchronous rest to a task of its own, so no case waits behind another case's judge. Those
tasks are bounded (``workers`` x 64 in flight, as many as the workers used to score at once): past that a worker
waits for one to finish (backpressure, as a full queue). A judged case is exported twice, with disjoint metric
names; the source's acknowledgement (the case's ``Completion``) is released only when both parts were handed over
(and delivered, for exporters that send later: evald/exporters/acks.py). ``evald_scored_cases_total`` counts a
case once, when its last part was handed to the exporters.

Config keys: the pipeline's ``workers`` and ``export_timeout`` (per exporter per export; an exporter that waits for
room in its queue, ``waits_for_room``, is backpressure and has no deadline here, nor has one that only records in
memory, ``in_memory``: the Prometheus table, the explorer).

Failure semantics: an exporter that raises or times out is counted per exporter and reason
(``evald_exporter_send_failed_cases_total``) and does not block the others; a scoring bug drops its case
(``evald_cases_dropped_total{reason="worker_error"}``). ``stop`` waits for everything queued or in flight until its
deadline, then cancels: a case still in a worker or a judged task counts as dropped with reason
``shutdown_in_flight`` (its cheap scores may have been exported), a case still queued as ``shutdown``. Every
case taken from the queue is therefore scored, dropped by one of these reasons, or still queued.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evald.assembly.completion import Completion
from evald.case import EvalCase
from evald.exporters.acks import export_ack
from evald.frozen import constructor, fast_init
from evald.interfaces import Exporter
from evald.model import Delivery, ScoredCase
from evald.pipeline.scoring import CaseScorer, MetricPlan, Remainder
from evald.telemetry import LabelCache, RateLimitedLog, Telemetry

if TYPE_CHECKING:
    from evald.windowed.stage import WindowedStage

logger = logging.getLogger(__name__)

#: Most cases a worker takes from the queue at once; their (cheap) scores go to the exporters as one batch.
MAX_BATCH = 64
SHUTDOWN = "shutdown"
IN_FLIGHT = "shutdown_in_flight"


@fast_init
@dataclass(frozen=True, slots=True)
class Work:
    case: EvalCase
    plan: MetricPlan
    completion: Completion


#: ``Work(...)`` as a plain function (evald.frozen.constructor): one is built per queued case
new_work = constructor(Work)


@dataclass(slots=True)
class _Judged:
    work: Work
    remainder: Remainder | None  # None: score the whole case (split off)
    exported: bool = False


def _release_all(completions: list[Completion]) -> None:
    for completion in completions:
        completion.release()


class ScoringStage:
    def __init__(
        self,
        queue: asyncio.Queue[Work],
        scorer: CaseScorer,
        exporters: Sequence[Exporter],
        telemetry: Telemetry,
        *,
        workers: int,
        export_timeout: float,
        split: bool = True,
        windowed: WindowedStage | None = None,
    ) -> None:
        self._queue = queue
        self._scorer = scorer
        self._exporters = list(exporters)
        #: exporters whose export() only records in memory and never waits (``in_memory``): called without a deadline
        #: (an asyncio.timeout per exporter and batch is a timer scheduled and cancelled for nothing)
        self._in_memory = frozenset(id(e) for e in self._exporters if getattr(e, "in_memory", False))
        self._tm = telemetry
        self._n_workers = workers
        self._export_timeout = export_timeout
        self._split = split
        self._windowed = windowed  # multi-case metrics: fed every exported case, their scores exported with them
        self._slots = asyncio.Semaphore(workers * MAX_BATCH)  # judged cases in flight
        self._workers: list[asyncio.Task[None]] = []
        self._judged: dict[asyncio.Task[None], _Judged] = {}
        self._scored = LabelCache(telemetry.scored_cases)
        self._dropped = LabelCache(telemetry.cases_dropped)
        self._log = RateLimitedLog(logger)

    def start(self) -> None:
        for i in range(self._n_workers):
            self._workers.append(asyncio.create_task(self._work_loop(), name=f"evald:worker-{i}"))

    # -- workers ------------------------------------------------------------------------------------------------

    async def _work_loop(self) -> None:
        queue = self._queue
        while True:
            owned = [await queue.get()]
            while len(owned) < MAX_BATCH and not queue.empty():
                owned.append(queue.get_nowait())
            taken = len(owned)
            acked: list[Work] = []  # cases whose completion the batch's export acknowledgement releases
            try:
                await self._process(owned, acked)
            except asyncio.CancelledError:
                self._drop(owned, acked, IN_FLIGHT)
                raise
            except Exception:  # never let a worker die
                self._drop(owned, acked, "worker_error")
                logger.exception("worker failed on a batch of %d cases", taken)
            finally:
                for _ in range(taken):
                    queue.task_done()

    async def _process(self, owned: list[Work], acked: list[Work]) -> None:
        """Score ``owned``, export the cheap scores, hand judged cases to tasks; ``owned`` keeps what this worker
        still answers for (emptied once every case was counted or handed over)."""
        ready: list[ScoredCase] = []
        judged: list[tuple[Work, Remainder | None]] = []
        scorer = self._scorer
        completions: list[Completion] = []  # what the batch's acknowledgement releases
        # exporters that send later hold this until their scores are delivered (evald/exporters/acks.py)
        ack = Delivery(functools.partial(_release_all, completions))
        try:
            for work in tuple(owned):
                plan = work.plan
                try:
                    if plan.inline:
                        ready.append(scorer.score_inline(work.case, plan))
                    elif not plan.has_async:
                        ready.append(await scorer.score(work.case, plan))
                    else:
                        first, remainder = scorer.begin(work.case, plan) if self._split else (None, None)
                        if first is not None:
                            work.completion.hold()  # this part's own hold, released with the acknowledgement
                            ready.append(first)
                            completions.append(work.completion)
                            acked.append(work)
                        judged.append((work, remainder))
                        continue
                except Exception as err:
                    self._dropped.get("worker_error").inc()
                    self._log.log(logging.ERROR, "score-bug", "scoring failed on a case of trace %s: %r",
                                  work.case.trace_id, err)
                    work.completion.release()
                    owned.remove(work)  # counted
                    continue
                completions.append(work.completion)
                acked.append(work)
            if ready:
                token = export_ack.set(ack)
                try:
                    await self.fan_out(ready)
                finally:
                    export_ack.reset(token)
            # without judged cases every acknowledged case is scored whole (the usual batch: no filtering)
            self._count_scored([w for w in acked if not w.plan.has_async] if judged else acked)
        finally:
            scorer.flush_skips()
            ack.seal()
        owned[:] = [work for work, _ in judged]
        for work, remainder in judged:
            await self._slots.acquire()
            task = asyncio.create_task(self._finish(job := _Judged(work, remainder)), name="evald:judged")
            self._judged[task] = job
            task.add_done_callback(self._settle)
            owned.pop(0)

    def _count_scored(self, works: Sequence[Work]) -> None:
        if not works:
            return
        per_scope: dict[str, int] = {}  # counted once per batch (a counter increment takes a lock)
        for work in works:
            scope: str = work.case.scope
            per_scope[scope] = per_scope.get(scope, 0) + 1
        for scope, n in per_scope.items():
            self._scored.get(scope).inc(n)

    async def _finish(self, job: _Judged) -> None:
        """The asynchronous part of a judged case, exported on its own; counted scored once handed over. A
        cancelled task (shutdown) is counted by ``_settle``, even one cancelled before it ever ran."""
        work = job.work
        try:
            if job.remainder is None:
                result = await self._scorer.score(work.case, work.plan)
            else:
                result = await self._scorer.finish(work.case, work.plan, job.remainder)
        except Exception as err:
            self._dropped.get("worker_error").inc()
            self._log.log(logging.ERROR, "score-bug", "scoring failed on a case of trace %s: %r",
                          work.case.trace_id, err)
            work.completion.release()
            return
        ack = Delivery(work.completion.release)
        token = export_ack.set(ack)
        job.exported = True  # from here the acknowledgement releases the completion
        try:
            await self.fan_out((result,))
        finally:
            export_ack.reset(token)
            ack.seal()
        self._scored.get(work.case.scope).inc()

    def _settle(self, task: asyncio.Task[None]) -> None:
        job = self._judged.pop(task)
        self._slots.release()
        if task.cancelled():
            self._dropped.get(IN_FLIGHT).inc()
            if not job.exported:
                job.work.completion.release()

    def _drop(self, owned: list[Work], acked: list[Work], reason: str) -> None:
        """Count what a worker still answered for when it was interrupted; release what no acknowledgement will
        (a cheap case in the batch's acknowledgement is released by it; a judged case's own hold never is)."""
        if not owned:
            return
        self._dropped.get(reason).inc(len(owned))
        in_ack = {id(w) for w in acked}
        for work in owned:
            if id(work) not in in_ack or work.plan.has_async:
                work.completion.release()
        owned.clear()

    async def fan_out(self, batch: Sequence[ScoredCase]) -> None:
        if self._windowed is not None and batch:
            batch = [*batch, *self._windowed.observe(batch)]
        in_memory = self._in_memory
        for exporter in self._exporters:
            try:
                if id(exporter) in in_memory:
                    await exporter.export(batch)
                    continue
                # an exporter whose full queue makes export() wait (block_on_overflow) is backpressure, not a hang
                timeout = None if getattr(exporter, "waits_for_room", False) else self._export_timeout
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

    # -- stopping -----------------------------------------------------------------------------------------------

    async def drain(self, timeout: float) -> bool:
        """Wait until every queued case is scored and exported (judged parts too); False if the deadline passed."""
        try:
            async with asyncio.timeout(timeout):
                await self._queue.join()
                while self._judged:
                    await asyncio.wait(set(self._judged))
            return True
        except TimeoutError:
            return False

    async def stop(self, timeout: float, grace: float = 0.5) -> None:
        """``drain`` within ``timeout``, then cancel the workers and judged tasks (waiting at most ``grace`` for
        them to count what they held) and drop what is still queued, counted."""
        await self.drain(timeout)
        tasks = [*self._workers, *self._judged]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        self._workers.clear()
        queue = self._queue
        dropped = 0
        while not queue.empty():
            work = queue.get_nowait()
            dropped += 1
            work.completion.release()
            queue.task_done()
        if dropped:
            self._dropped.get(SHUTDOWN).inc(dropped)
