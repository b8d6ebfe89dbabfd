"""Judges that act as replicas of one judge in one test process: each has its own limiter, Redis link and
registry, all pointing at one real redis-server and one stand-in."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from evald.judges.judge import Judge
from evald.judges.prompting import VerdictField
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import FakeLLM, judge_config, make_judge

SCORE = (VerdictField("score", 1, 5, "quality"),)
TASK = "Judge the output."


def replica(llm: FakeLLM, redis_url: str, *, replicas: int = 2, prefix: str = "t", **overrides: Any
            ) -> tuple[Judge, CollectorRegistry]:
    registry = CollectorRegistry()
    # a Redis deadline far above a round trip: two late answers in a row (an event loop held up by the SDK's work on
    # a slow CI machine) would put a replica on its in-process share and change what the tests count
    coordination = {"redis": {"url": redis_url, "key_prefix": prefix, "timeout": "2s"},
                    "expected_replicas": replicas, "reconnect_max_interval": "0.2s",
                    **overrides.pop("coordination", {})}
    config = judge_config(llm, coordination=coordination, **overrides)
    return make_judge(config, JudgeTelemetry(registry)), registry


async def ask(judge: Judge, text: str = "Paris is the capital of France.") -> int:
    return (await judge.evaluate(TASK, [("output", text)], SCORE, metric="m@1")).values["score"]


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return value if value is not None else 0.0
