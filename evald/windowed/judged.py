"""Group metrics that must await something (a judge comparing the runs of a group, e.g. the outputs of two
variants): each complete group is measured in a task of its own and its score exported when it exists.

Bounds and failure semantics: at most ``max_tasks`` groups are measured at once (a group completing beyond that is
dropped, counted ``busy``); each measurement has the pipeline's ``metric_timeout`` (``timeout``); a metric that
raises or times out is counted (``error`` / ``timeout``) and logged at a limited rate, never exported as a score.
``drain(timeout)`` (pipeline shutdown, end of a replay) waits for the tasks in flight, then cancels and counts the
rest (``shutdown``). The score is exported through the pipeline's own fan-out (so its exporters, deadlines and the
windowed stage see it like any score); no source acknowledgement waits for it (best effort, like conversations).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from evald.case import EvalCase, Score
from evald.metrics.multi_case import GroupMetric, Run
from evald.model import ScoredCase
from evald.telemetry import RateLimitedLog

logger = logging.getLogger(__name__)

Export = Callable[[Sequence[ScoredCase]], Awaitable[None]]
#: (metric, runs, latest case, score) -> the scored case to export
Finish = Callable[[GroupMetric, list[Run], EvalCase, Score], ScoredCase]


class GroupJudge:
    """The tasks measuring asynchronous group metrics."""

    def __init__(self, dropped: Callable[[str, str, int], None], max_tasks: int = 64) -> None:
        self._dropped = dropped  # (metric, reason, n)
        self._max_tasks = max_tasks
        self._tasks: set[asyncio.Task[None]] = set()
        self._export: Export | None = None
        self._timeout = 30.0
        self._log = RateLimitedLog(logger)

    def bind(self, export: Export, timeout: float) -> None:
        """Where scores go (the pipeline's fan-out) and the deadline of one measurement."""
        self._export, self._timeout = export, timeout

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def start(self, metric: GroupMetric, runs: list[Run], latest: EvalCase, finish: Finish) -> None:
        if self._export is None or len(self._tasks) >= self._max_tasks:
            self._dropped(metric.name, "busy", len(runs))
            return
        task = asyncio.get_running_loop().create_task(self._measure(metric, runs, latest, finish),
                                                      name=f"evald:group:{metric.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _measure(self, metric: GroupMetric, runs: list[Run], latest: EvalCase, finish: Finish) -> None:
        try:
            async with asyncio.timeout(self._timeout):
                score = await metric.a_measure_group(runs)
        except TimeoutError:
            self._dropped(metric.name, "timeout", len(runs))
            return
        except Exception as err:
            self._dropped(metric.name, "error", len(runs))
            self._log.log(logging.WARNING, f"group:{metric.name}", "metric %s failed: %s: %s", metric.name,
                          type(err).__name__, err)
            return
        if score is None:
            self._dropped(metric.name, "not_applicable", len(runs))
            return
        assert self._export is not None
        await self._export([finish(metric, runs, latest, score)])

    async def drain(self, timeout: float) -> None:
        """Wait for the measurements in flight until ``timeout``; cancel and count what is left."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
            self._dropped(task.get_name().removeprefix("evald:group:"), "shutdown", 1)
        if pending:
            await asyncio.wait(pending, timeout=0.5)
