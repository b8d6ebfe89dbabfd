"""A named judge: the one call path of every judged metric.

Order: ``never_send`` (a case of a listed service is not sent at all: counted ``never_send``, the metric is
skipped with that reason) -> redaction -> verdict cache (``cache``; identical requests share one call) -> with
``batch``, the case's other judged metrics on this judge join the same call (evald/judges/batching.py) -> the
delimited prompt -> the provider, asked for the verdict's JSON schema (native structured output), through the
limiter -> strict parsing of the verdict.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Sequence
from typing import Any

from evald.judges.batching import Batcher
from evald.judges.cache import VerdictCache, cache_key
from evald.judges.config import JudgeConfig
from evald.judges.limiter import JudgeLimiter, JudgeSkipped
from evald.judges.prompting import JudgePrompt, Verdict, VerdictField, build_prompt, parse_verdict, verdict_schema
from evald.judges.providers import JudgeProvider, make_provider
from evald.judges.redaction import Redactor
from evald.judges.telemetry import JudgeTelemetry
from evald.judges.tracing import Evaluated, judged_evaluation, note_cache_hit, traced_send


@functools.lru_cache(maxsize=256)
def _template(task: str, fields: tuple[VerdictField, ...]) -> str:
    """The trusted part of a prompt, for the cache key (computed once per metric, not per call)."""
    return json.dumps([task, [[f.name, f.minimum, f.maximum, f.meaning, *([f.at_most] if f.at_most else [])]
                              for f in fields]])  # at_most: a verdict cached before the bound was checked is not reused


@functools.lru_cache(maxsize=256)
def _schema(fields: tuple[VerdictField, ...]) -> dict[str, Any]:
    """The verdict's JSON schema, built once per metric (shared, never modified)."""
    return verdict_schema(fields)


@functools.lru_cache(maxsize=256)
def _schema_text(fields: tuple[VerdictField, ...]) -> str:
    return json.dumps(_schema(fields))


def sent_text(prompt: JudgePrompt, fields: Sequence[VerdictField]) -> str:
    """All the text one request sends (prompt and verdict schema): what the limiter's worst case is counted on."""
    return f"{prompt.text}\n{_schema_text(tuple(fields))}"


class Judge:
    def __init__(
        self, name: str, config: JudgeConfig, telemetry: JudgeTelemetry, *,
        provider: JudgeProvider | None = None, limiter: JudgeLimiter | None = None,
        cache: VerdictCache[Verdict] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self._tm = telemetry
        self.provider = provider if provider is not None else make_provider(config)
        self.limiter = limiter if limiter is not None else JudgeLimiter(name, config, telemetry)
        self.redactor = Redactor(config.redaction)
        self.cache = cache if cache is not None or not config.cache.enabled else (
            VerdictCache(config.cache) if self.limiter.coordination is None
            else self.limiter.coordination.shared_cache(config.cache))  # shared by every replica
        self.batcher = Batcher(name, config, self.limiter, self._call, telemetry.registry) if (
            config.batch.enabled) else None
        self._never_send = frozenset(config.never_send.service_names)

    async def evaluate(
        self, task: str, data: Sequence[tuple[str, str]], fields: Sequence[VerdictField], *,
        metric: str = "", service: str | None = None, batch_key: object = None, evaluated: Evaluated | None = None,
    ) -> Verdict:
        """Judge ``data`` ((label, untrusted text) pairs) for ``task``. ``metric`` (``kind@version``) keys the
        cache; ``service`` is the case's ``service.name``; ``batch_key`` (the case's identity) lets a batching judge ask
        it with the case's other metrics; ``evaluated`` (the case's trace id, span id, scope) links the call's span
        to it when judge calls are traced (evald/judges/tracing.py). Raises ``JudgeSkipped`` when the call is
        deliberately not made, ``JudgeError`` when it gave no verdict."""
        async with judged_evaluation(self.name, self.config.model, self.config.provider, metric, evaluated) as span:
            verdict, hit = await self._evaluate(task, data, fields, metric, service, batch_key)
            if hit:
                note_cache_hit(span)
            return verdict

    async def _evaluate(
        self, task: str, data: Sequence[tuple[str, str]], fields: Sequence[VerdictField], metric: str,
        service: str | None, batch_key: object,
    ) -> tuple[Verdict, bool]:
        if service is not None and service in self._never_send:
            self._tm.requests.labels(self.name, "never_send").inc()
            raise JudgeSkipped(self.name, "never_send", f"service {service!r} is in never_send; nothing sent")
        session = self.redactor.session()
        redacted = [(label, session.redact(text)) for label, text in data]
        batcher = self.batcher if batch_key is not None else None

        def ask() -> Awaitable[Verdict]:
            if batcher is not None:
                return batcher.ask(batch_key, task, redacted, fields)
            return self._call(task, redacted, fields)

        if self.cache is None:
            return await ask(), False
        key = cache_key(metric, self.config.model, _template(task, tuple(fields)), redacted)

        def miss() -> Awaitable[Verdict]:
            self._tm.cache_requests.labels(self.name, "miss").inc()
            return ask()

        verdict, hit = await self.cache.get_or_call(key, miss)
        if hit:
            self._tm.cache_requests.labels(self.name, "hit").inc()
        return verdict, hit

    async def _call(self, task: str, data: Sequence[tuple[str, str]], fields: Sequence[VerdictField]) -> Verdict:
        prompt = build_prompt(task, data, fields)
        schema = _schema(tuple(fields))
        send = traced_send(lambda: self.provider.complete(prompt.system, prompt.user, schema), self.config.model,
                           self.config.provider, self.limiter.cost_usd)  # a span per attempt when traced
        return await self.limiter.call(sent_text(prompt, fields), send, lambda text: parse_verdict(text, fields))

    async def aclose(self) -> None:
        if self.batcher is not None:
            await self.batcher.aclose()
        await self.limiter.aclose()
        await self.provider.aclose()
