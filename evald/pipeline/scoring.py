"""Run a case's metrics: each under its own timeout; exceptions are caught, counted and reported as errors.

A metric returning ``None`` is "skipped" (not applicable), never a 0 score. A metric that raises or times out is
an "error" outcome with a short reason; it never becomes a score and never stops the other metrics.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from evald.case import EvalCase, Score
from evald.model import ScoredCase
from evald.pipeline.bindings import MetricBinding
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)


class CaseScorer:
    def __init__(self, telemetry: Telemetry, metric_timeout: float) -> None:
        self._tm = telemetry
        self._timeout = metric_timeout
        self._log = RateLimitedLog(logger)

    async def score(self, case: EvalCase, bindings: Sequence[MetricBinding]) -> ScoredCase:
        scores: list[Score] = []
        skipped: list[tuple[str, str]] = []
        errors: list[tuple[str, str]] = []
        dimensions: dict[str, str] = {}
        for binding in bindings:
            metric = binding.metric
            dimensions[metric.name] = metric.dimension.value
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self._timeout):
                    result = await metric.a_measure(case)
            except TimeoutError:
                self._tm.metric_errors.labels(metric.name, "timeout").inc()
                errors.append((metric.name, f"timed out after {self._timeout:g}s"))
                self._log.log(logging.WARNING, f"timeout:{metric.name}", "metric %s timed out", metric.name)
                continue
            except Exception as err:  # a metric bug must never take the daemon down
                self._tm.metric_errors.labels(metric.name, "exception").inc()
                errors.append((metric.name, f"{type(err).__name__}: {err}"[:300]))
                self._log.log(
                    logging.WARNING, f"exc:{metric.name}", "metric %s failed: %s: %s", metric.name,
                    type(err).__name__, err,
                )
                continue
            finally:
                self._tm.metric_duration.labels(metric.name).observe(time.perf_counter() - started)
            if result is None:
                skipped.append((metric.name, "not_applicable"))
            elif isinstance(result, Score):
                scores.append(result)
            else:
                self._tm.metric_errors.labels(metric.name, "bad_result").inc()
                errors.append((metric.name, f"returned {type(result).__name__}, not Score or None"))
        return ScoredCase(
            case=case, scores=tuple(scores), skipped=tuple(skipped), errors=tuple(errors),
            metric_dimensions=dimensions,
        )
