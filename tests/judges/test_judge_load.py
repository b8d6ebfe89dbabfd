"""No evaluation is lost under rate limiting: the real pipeline (window -> mapping -> bounded queue -> workers)
with judged metrics through the real openai SDK against a local server that answers every other call with a 429
and a Retry-After. Every case ends with a score or a counted skip/error with a reason, and the counts add up."""

from __future__ import annotations

import collections
from dataclasses import dataclass

from aiohttp import web

from evald.config.loader import parse_config
from evald.exporters.memory import InMemoryExporter
from evald.judges.registry import close_judges
from evald.pipeline.sampling import trace_bucket
from evald.service import EvaldService
from evald.telemetry import Telemetry
from tests.judges.fake_llm import FakeLLM
from tests.judges.load_traces import replicated_batches, trace_id_hex
from tests.metrics.local_http import serve

TRACES = 140
METRICS = ("error_free", "answer_relevancy", "relevancy_if_ok")


@dataclass
class _HalfRateLimited(FakeLLM):
    """Answers every second request with 429 + ``retry-after-ms`` (as OpenAI does) and ``Retry-After``."""

    calls: int = 0
    rate_limited: int = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        if self.calls % 2 == 0:
            self.rate_limited += 1
            return web.json_response({"error": {"message": "slow down", "type": "rate_limit"}}, status=429,
                                     headers={"Retry-After": "1", "retry-after-ms": "20"})
        return await super().handle(request)


def _config(base_url: str) -> str:
    return f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
pipeline: {{ workers: 3, queue_size: 16, metric_timeout: 60s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: sk-test-not-a-real-key, base_url: "{base_url}/v1",
             timeout: 5s, max_retries: 8, retry_initial_interval: 0.01s, max_concurrency: 16,
             circuit_breaker: {{ failures: 1000 }}, cache: {{ enabled: false }} }}
metrics:
  - {{ kind: error_free, scope: trace }}
  - {{ kind: answer_relevancy, scope: trace, sampling: 0.7 }}
  - {{ kind: answer_relevancy, name: relevancy_if_ok, scope: trace, when: {{ metric: error_free, passed: true }} }}
"""


async def test_half_the_judge_calls_rate_limited_loses_no_evaluation() -> None:
    llm = _HalfRateLimited()
    telemetry = Telemetry()
    memory = InMemoryExporter("load")
    async with serve(llm.handle) as server:
        llm.server = server
        config = parse_config(_config(server.base_url))
        service = EvaldService(config, telemetry, with_receivers=False, with_admin=False,
                               configured_exporters=False, extra_exporters=[memory])
        pipeline = service.pipeline
        await pipeline.start()
        try:
            for batch in replicated_batches(TRACES):
                service.window.consume(batch)
                await service.window.flush(pipeline.on_trace)  # waits on the bounded queue (backpressure)
            assert await pipeline.drain(timeout=60)
        finally:
            await pipeline.shutdown(timeout=1)
            await close_judges()

    parts = [c for c in memory.cases if c.case.scope == "trace"]  # a case's cheap part, then its judged part
    seen: dict[str, list[str]] = collections.defaultdict(list)
    outcomes: collections.Counter[tuple[str, str]] = collections.Counter()
    for scored in parts:
        seen[scored.case.trace_id] += ([s.name for s in scored.scores] + [n for n, _ in scored.skipped]
                                       + [n for n, _ in scored.errors])
        outcomes.update((s.name, "score") for s in scored.scores)
        outcomes.update((name, f"skip:{reason}") for name, reason in scored.skipped)
        outcomes.update((name, "error") for name, _ in scored.errors)
        assert all("rate_limited" in reason for _, reason in scored.errors), scored.errors
    assert sorted(seen) == sorted(trace_id_hex(i) for i in range(1, TRACES + 1))
    for names in seen.values():  # each metric exactly once per case: a score, a skip with a reason, or an error
        assert sorted(names) == sorted(METRICS)
    assert sum(outcomes.values()) == TRACES * len(METRICS)

    sample = telemetry.registry.get_sample_value
    assert sample("evald_scored_cases_total", {"scope": "trace"}) == TRACES
    for reason in ("shutdown", "worker_error"):
        assert sample("evald_cases_dropped_total", {"reason": reason}) is None
    for (name, outcome), count in outcomes.items():  # every skip and error is counted by metric and reason
        if outcome.startswith("skip:"):
            assert sample("evald_metric_skips_total", {"metric": name, "reason": outcome[5:]}) == count
        elif outcome == "error":
            assert sample("evald_metric_errors_total", {"metric": name, "reason": "exception"}) == count

    sampled_out = sum(trace_bucket(trace_id_hex(i)) >= 0.7 for i in range(1, TRACES + 1))
    assert 0 < outcomes["answer_relevancy", "skip:sampled_out"] == sampled_out
    failed_traces = len({c.case.trace_id for c in parts if c.case.error})
    assert 0 < outcomes["relevancy_if_ok", "skip:condition_not_met"] == failed_traces

    judged = sum(count for (name, outcome), count in outcomes.items()
                 if name != "error_free" and outcome in ("score", "error"))
    ok = sample("evald_judge_requests_total", {"judge": "default", "outcome": "ok"}) or 0.0
    limited = sample("evald_judge_requests_total", {"judge": "default", "outcome": "rate_limited"}) or 0.0
    assert llm.calls == len(server.requests) == ok + limited  # every request the server saw is counted
    assert limited == llm.rate_limited == llm.calls // 2  # half the calls were answered 429
    assert ok == outcomes["answer_relevancy", "score"] + outcomes["relevancy_if_ok", "score"]  # one verdict each
    assert ok >= 0.9 * judged  # retries after the Retry-After wait turned most 429s into verdicts
