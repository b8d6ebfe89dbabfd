"""Batched judging (``judges.<name>.batch``, opt-in): the judged metrics of one case that use this judge are asked
in one call, with one structured verdict per metric (evald/judges/batch_prompt.py).

Config: ``enabled`` (default false), ``max_metrics`` (most metrics in one call, default 4; a case with more gets
several calls), ``max_wait`` (how long the first metric of a case waits for the others, default 10ms: the scorer
starts a case's judged metrics together, so they arrive within one event-loop turn, or one Redis round trip with a
shared cache).

How: a judged metric's request that misses the verdict cache (evald/judges/judge.py; the cache stays per metric:
each verdict is stored under its own metric's key, and a hit is never sent) joins the open group of its case; the
group is sent when it is full or ``max_wait`` has passed. A group of one is an ordinary single call. A group of
several is one provider request through the limiter: one budget reservation (worst case: the whole prompt and
schema, and ``max_output_tokens`` x ``max_metrics`` output tokens, which is also the batch request's
``max_tokens``), one RPM slot, one circuit-breaker outcome, counted once in ``evald_judge_requests_total``.

Failure semantics: the answer is parsed per part, strictly (a part's verdict has exactly a single verdict's
shape); a malformed part fails only its metric (``JudgeError`` ``malformed``, counted
``evald_judge_batch_parts_total{result="malformed"}``), the others get their verdicts. An answer that is not one
JSON object, a refusal (budget, circuit) or a failed call reaches every metric of the group, as for a single call.
A metric that gives up (its timeout) leaves the call running for the others; the call is charged as usual.
Closing the judge (``aclose``) fails the metrics still waiting, in an open group or in a call being sent, at once
with ``JudgeError`` ``closed`` (not at their metric timeout).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter
from pydantic import Field

from evald.config.base import ComponentConfig, Duration
from evald.judges.batch_prompt import BatchPart, batch_schema, build_batch_prompt, parse_batch
from evald.judges.prompting import Verdict, VerdictField
from evald.judges.tracing import traced_send
from evald.outcomes import short_detail
from evald.telemetry import shared_instruments

if TYPE_CHECKING:
    from evald.judges.config import JudgeConfig
    from evald.judges.limiter import JudgeLimiter
    from evald.judges.providers import JudgeProvider

logger = logging.getLogger(__name__)
Single = Callable[[str, Sequence[tuple[str, str]], Sequence[VerdictField]], Awaitable[Verdict]]


class BatchConfig(ComponentConfig):
    enabled: bool = Field(False, description="Ask the judged metrics of one case that use this judge in one call.")
    max_metrics: int = Field(4, ge=2, le=16, description="Most metrics in one call (also scales its max_tokens).")
    max_wait: Duration = Field(
        0.01, ge=0, le=1, description="How long the first metric of a case waits for the others."
    )


class BatchTelemetry:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.calls = Counter("evald_judge_batch_calls", "Batched judge calls sent (two metrics or more each).",
                             ["judge"], registry=registry)
        self.parts = Counter(
            "evald_judge_batch_parts", "Metrics asked in batched calls, by result: ok (a verdict), malformed (its "
            "part of the answer was not a valid verdict: only that metric fails), failed (the whole call failed or "
            "was refused).", ["judge", "result"], registry=registry,
        )


@dataclass(slots=True)
class _Group:
    parts: list[tuple[BatchPart, asyncio.Future[Verdict]]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None


def _resolve(future: asyncio.Future[Verdict], verdict: Verdict | BaseException) -> None:
    if future.done():  # its metric gave up
        return
    if isinstance(verdict, BaseException):
        future.set_exception(verdict)
    else:
        future.set_result(verdict)


class Batcher:
    def __init__(self, name: str, config: JudgeConfig, limiter: JudgeLimiter, single: Single,
                 registry: CollectorRegistry, provider: JudgeProvider | None = None) -> None:
        from evald.judges.providers import make_provider  # providers import the config, which imports this module

        self.name = name
        self._cfg = config.batch
        self.output_tokens = config.max_output_tokens * config.batch.max_metrics
        self.provider = provider if provider is not None else make_provider(
            config.model_copy(update={"max_output_tokens": self.output_tokens}))
        self._limiter = limiter
        self._single = single
        self._model, self._provider_name = config.model, config.provider  # for the attempt spans (tracing.py)
        self._tm = shared_instruments(registry, BatchTelemetry)
        self._open: dict[object, _Group] = {}
        #: calls being sent, with the futures of their parts (failed by aclose if still pending)
        self._sending: dict[asyncio.Task[None], list[asyncio.Future[Verdict]]] = {}

    async def ask(self, key: object, task: str, data: Sequence[tuple[str, str]], fields: Sequence[VerdictField]
                  ) -> Verdict:
        """The verdict for one metric of the case ``key``, asked together with that case's other metrics."""
        loop = asyncio.get_running_loop()
        group = self._open.get(key)
        if group is None:
            group = self._open[key] = _Group()
            group.timer = loop.call_later(self._cfg.max_wait, self._flush, key, group)
        future: asyncio.Future[Verdict] = loop.create_future()
        group.parts.append((BatchPart(task, tuple(data), tuple(fields)), future))
        if len(group.parts) >= self._cfg.max_metrics:
            self._flush(key, group)
        return await future

    def _flush(self, key: object, group: _Group) -> None:
        if self._open.get(key) is group:
            del self._open[key]
        if group.timer is not None:
            group.timer.cancel()
        live = [(part, future) for part, future in group.parts if not future.done()]
        if live:
            task = asyncio.get_running_loop().create_task(self._send(live))
            self._sending[task] = [future for _, future in live]
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._sending.pop(task, None)

    async def _send(self, parts: list[tuple[BatchPart, asyncio.Future[Verdict]]]) -> None:
        if len(parts) == 1:
            part, future = parts[0]
            try:
                _resolve(future, await self._single(part.task, part.data, part.fields))
            except Exception as err:  # JudgeSkipped / JudgeError: the metric's outcome
                _resolve(future, err)
            return
        batch = [part for part, _ in parts]
        prompt, schema = build_batch_prompt(batch), batch_schema(batch)
        self._tm.calls.labels(self.name).inc()
        try:
            send = traced_send(lambda: self.provider.complete(prompt.system, prompt.user, schema), self._model,
                               self._provider_name, self._limiter.cost_usd)  # a span per attempt when traced
            results = await self._limiter.call(
                f"{prompt.text}\n{json.dumps(schema)}", send, lambda text: parse_batch(text, batch),
                output_tokens=self.output_tokens,
            )
        except Exception as err:
            self._tm.parts.labels(self.name, "failed").inc(len(parts))
            for _, future in parts:
                _resolve(future, err)
            return
        from evald.judges.limiter import JudgeError

        for (_, future), result in zip(parts, results, strict=True):
            if isinstance(result, ValueError):
                self._tm.parts.labels(self.name, "malformed").inc()
                logger.warning("judge %s: malformed part of a batched verdict: %s", self.name,
                               short_detail(str(result)))
                _resolve(future, JudgeError(self.name, "malformed", str(result)))
            else:
                self._tm.parts.labels(self.name, "ok").inc()
                _resolve(future, result)

    async def aclose(self) -> None:
        """Stop: open groups are not sent and calls being sent are cancelled; every metric still waiting gets
        ``JudgeError`` ``closed`` now."""
        from evald.judges.limiter import JudgeError

        waiting: list[asyncio.Future[Verdict]] = []
        for group in list(self._open.values()):
            if group.timer is not None:
                group.timer.cancel()
            waiting += [future for _, future in group.parts]
        self._open.clear()
        sending = dict(self._sending)
        for task, futures in sending.items():
            task.cancel()
            waiting += futures
        await asyncio.gather(*sending, return_exceptions=True)
        for future in waiting:
            _resolve(future, JudgeError(self.name, "closed", "the judge was closed before its verdict arrived"))
        await self.provider.aclose()
