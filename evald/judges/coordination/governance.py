"""Wire one judge's limiter to the shared Redis (``judges.<name>.coordination``): its budget, its RPM/TPM limits
and its circuit breaker are replaced by the shared ones (redis_budget, redis_rate, redis_circuit), and
``shared_cache`` gives the judge its shared verdict cache (redis_cache). All of them use one ``RedisLink`` (one
connection pool, one health state and reconnection loop per judge). Imported only when a judge is coordinated."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry

from evald.judges.config import CacheConfig, JudgeConfig
from evald.judges.coordination.link import RedisLink
from evald.judges.coordination.redis_budget import SharedBudget
from evald.judges.coordination.redis_cache import SharedVerdictCache
from evald.judges.coordination.redis_circuit import SharedCircuitBreaker
from evald.judges.coordination.redis_rate import SharedRate
from evald.judges.coordination.telemetry import coordination_telemetry


class Coordination:
    def __init__(self, name: str, config: JudgeConfig, registry: CollectorRegistry, *,
                 clock: Callable[[], float], wall_clock: Callable[[], float]) -> None:
        coordination = config.coordination
        assert coordination is not None
        self.telemetry = coordination_telemetry(registry)
        self.link = RedisLink(name, coordination, self.telemetry)
        self._config = config
        replicas = coordination.expected_replicas
        has_budget = any(limit is not None for limit in (
            config.budget.max_cost_usd.hour, config.budget.max_cost_usd.day,
            config.budget.max_tokens.hour, config.budget.max_tokens.day))
        self.budget = SharedBudget(self.link, config, self.telemetry, wall_clock) if has_budget else None
        rpm, tpm = config.requests_per_minute, config.tokens_per_minute
        self.rpm = SharedRate(self.link, "rpm", rpm, rpm, replicas, self.telemetry) if rpm else None
        self.tpm = SharedRate(self.link, "tpm", tpm, tpm, replicas, self.telemetry) if tpm else None
        breaker = config.circuit_breaker
        self.breaker = SharedCircuitBreaker(self.link, breaker.failures, breaker.reset_after, self.telemetry,
                                            clock, wall_clock)

    def shared_cache(self, config: CacheConfig) -> SharedVerdictCache:
        coordination = self._config.coordination
        assert coordination is not None
        return SharedVerdictCache(config, self.link, self._config.call_deadline(), coordination.cache_wait,
                                  self.telemetry)

    async def aclose(self) -> None:
        if self.budget is not None:
            await self.budget.aclose()
        await self.breaker.aclose()
        await self.link.aclose()
