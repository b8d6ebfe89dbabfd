"""Batched judging through the real openai and anthropic SDKs against a stand-in that answers the schema it is
sent: the judged metrics of one case go in one call with one verdict per metric, a malformed part fails only its
metric, an unreadable answer fails them all, verdicts are cached per metric, the call is budgeted once; and through
the real scorer (evald replay) a case's judged metrics are grouped without any help from the pipeline."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from evald.config.loader import parse_config
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeError, JudgeSkipped
from evald.judges.prompting import Verdict, VerdictField
from evald.judges.telemetry import JudgeTelemetry
from evald.replay import replay
from tests.judges.batch_llm import SchemaLLM, schema_llm
from tests.judges.fake_llm import judge_config, make_judge
from tests.judges.test_replay_with_judges import CORPUS

pytestmark = pytest.mark.integration
PROVIDERS = ["openai", "anthropic"]
DATA = [("input", "What is the capital of France?"), ("output", "Paris.")]
METRICS = {
    "relevance@1": ("Is the output relevant to the input?", (VerdictField("score", 1, 5, "relevance"),)),
    "tone@1": ("Is the output polite?", (VerdictField("score", 1, 10, "politeness"),)),
    "claims@1": ("Count the claims.", (VerdictField("total", 0, None, "claims"),
                                      VerdictField("supported", 0, None, "supported claims", at_most="total"))),
}


def _judge(llm: SchemaLLM, provider: str, registry: CollectorRegistry | None = None, **overrides: Any) -> Judge:
    settings: dict[str, Any] = {"batch": {"enabled": True, "max_metrics": 4}, "max_retries": 0, **overrides}
    return make_judge(judge_config(llm, provider, **settings), JudgeTelemetry(registry or CollectorRegistry()))


async def _ask_all(judge: Judge, key: object = "case-1", names: tuple[str, ...] = tuple(METRICS)
                   ) -> list[Verdict | BaseException]:
    return list(await asyncio.gather(*(
        judge.evaluate(METRICS[n][0], DATA, METRICS[n][1], metric=n, batch_key=key) for n in names),
        return_exceptions=True))


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_judged_metrics_of_one_case_go_in_one_call(provider: str) -> None:
    registry = CollectorRegistry()
    async with schema_llm() as llm:
        judge = _judge(llm, provider, registry)
        results = await _ask_all(judge)
        await judge.aclose()
    assert [r.values for r in results if isinstance(r, Verdict)] == [
        {"score": 5}, {"score": 10}, {"total": 0, "supported": 0}]
    assert len(llm.bodies) == 1 and llm.batched_requests == 1 and llm.parts_asked == 3
    sent = json.dumps(llm.bodies[0])
    assert sent.count("Paris.") == 1  # the blocks the three metrics share are sent once
    assert registry.get_sample_value("evald_judge_requests_total", {"judge": "default", "outcome": "ok"}) == 1
    assert registry.get_sample_value("evald_judge_batch_parts_total", {"judge": "default", "result": "ok"}) == 3
    max_tokens = llm.bodies[0]["max_tokens"]
    assert max_tokens == judge.config.max_output_tokens * 4


def _out_of_range(name: str, verdict: dict[str, Any]) -> Any:
    return {**verdict, "score": 99} if name == "m2" else verdict


def _no_reasoning(name: str, verdict: dict[str, Any]) -> Any:
    return {k: v for k, v in verdict.items() if k != "reasoning"} if name == "m1" else verdict


def _not_an_object(name: str, verdict: dict[str, Any]) -> Any:
    return "score: 10" if name == "m3" else verdict


def _part_above_total(name: str, verdict: dict[str, Any]) -> Any:
    return {**verdict, "supported": verdict["total"] + 1} if name == "m3" else verdict


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("mangle", "broken"), [(_out_of_range, 1), (_no_reasoning, 0), (_not_an_object, 2),
                                                (_part_above_total, 2)],
                         ids=["out_of_range", "no_reasoning", "not_an_object", "part_above_total"])
async def test_a_malformed_part_fails_only_its_metric(provider: str, mangle: Any, broken: int) -> None:
    registry = CollectorRegistry()
    async with schema_llm() as llm:
        llm.mangle = mangle
        judge = _judge(llm, provider, registry)
        results = await _ask_all(judge)
        await judge.aclose()
    for index, result in enumerate(results):
        if index == broken:
            assert isinstance(result, JudgeError) and result.outcome == "malformed", result
        else:
            assert isinstance(result, Verdict), result
    assert registry.get_sample_value("evald_judge_batch_parts_total",
                                     {"judge": "default", "result": "malformed"}) == 1


async def test_a_part_with_a_duplicate_key_fails_alone_and_an_unreadable_answer_fails_all() -> None:
    async with schema_llm() as llm:
        judge = _judge(llm, "openai")
        llm.raw_answer = ('{"m1": {"reasoning": "a", "score": 5}, "m2": {"reasoning": "b", "score": 3, "score": 9}, '
                          '"m3": {"reasoning": "c", "total": 1, "supported": 1}}')
        first = await _ask_all(judge, "case-1")
        llm.raw_answer = "score: 5 for all of them"
        second = await _ask_all(judge, "case-2")
        await judge.aclose()
    assert isinstance(first[0], Verdict) and isinstance(first[2], Verdict) and first[2].values == {
        "total": 1, "supported": 1}
    assert isinstance(first[1], JudgeError) and "twice" in str(first[1])
    assert all(isinstance(r, JudgeError) and r.outcome == "malformed" for r in second)
    assert len(llm.bodies) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_verdicts_are_cached_per_metric(provider: str) -> None:
    async with schema_llm() as llm:
        judge = _judge(llm, provider, cache={"enabled": True})
        await _ask_all(judge, "case-1", ("relevance@1", "tone@1"))
        again = await _ask_all(judge, "case-2")  # the same texts: two hits, one metric asked (a single call)
        await judge.aclose()
    assert all(isinstance(r, Verdict) for r in again)
    assert len(llm.bodies) == 2 and llm.batched_requests == 1 and llm.parts_asked == 3


async def test_a_batch_is_budgeted_as_one_call() -> None:
    async with schema_llm() as llm:
        probe = _judge(llm, "openai")
        from evald.judges.batch_prompt import BatchPart, batch_schema, build_batch_prompt
        parts = [BatchPart(METRICS[n][0], tuple(DATA), METRICS[n][1]) for n in METRICS]
        prompt = build_batch_prompt(parts)
        worst = probe.limiter.worst_case(f"{prompt.text}\n{json.dumps(batch_schema(parts))}")
        await probe.aclose()
        limit = worst.input_tokens + 4 * probe.config.max_output_tokens  # exactly one batch's worst case
        judge = _judge(llm, "openai", budget={"max_tokens": {"hour": limit}})
        results = await _ask_all(judge, "case-1")
        refused = await _ask_all(judge, "case-2")
        await judge.aclose()
    assert all(isinstance(r, Verdict) for r in results) and len(llm.bodies) == 1
    assert all(isinstance(r, JudgeSkipped) and r.outcome == "budget_exhausted" for r in refused)


async def test_the_scorer_groups_a_case_s_judged_metrics_without_help() -> None:
    async with schema_llm() as llm:
        config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: sk-test-not-a-real-key, base_url: "{llm.base_url}/v1",
             timeout: 5s, batch: {{ enabled: true, max_metrics: 4 }} }}
metrics:
  - {{ kind: answer_relevancy, scope: trace }}
  - {{ kind: geval, scope: trace, options: {{ criteria: "The answer is correct and polite." }} }}
  - {{ kind: toxicity, scope: trace }}
""")
        result = await replay([CORPUS / "a_chat_correct.pb", CORPUS / "b_chat_wrong.pb"], config)
    scored = [c for c in result.scored]
    assert len(scored) == 2 and all(len(c.scores) == 3 for c in scored), [(c.skipped, c.errors) for c in scored]
    assert len(llm.bodies) == 2 and llm.batched_requests == 2 and llm.parts_asked == 6


async def test_a_batched_call_gets_its_attempt_span_like_a_single_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """With judge tracing on, the one batched provider call is a `chat <model>` CLIENT span with its usage."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from evald.judges import tracing

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    monkeypatch.setattr(tracing, "_tracer", provider.get_tracer("test"))
    async with schema_llm() as llm:
        judge = _judge(llm, "openai")
        results = await _ask_all(judge)
        await judge.aclose()
    assert all(isinstance(r, Verdict) for r in results) and llm.batched_requests == 1
    attempts = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert len(attempts) == 1
    attributes = dict(attempts[0].attributes or {})
    assert attributes["evald.judge.outcome"] == "ok" and attributes["evald.judge.attempt"] == 0
    assert attributes["gen_ai.request.model"] == judge.config.model
    assert isinstance(attributes.get("gen_ai.usage.input_tokens"), int)


async def _closed_at_once(judge: Judge, asked: asyncio.Task[list[Verdict | BaseException]]) -> None:
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(judge.aclose(), 5)
    results = await asyncio.wait_for(asked, 1)  # not at a metric timeout: at once
    assert asyncio.get_running_loop().time() - started < 1
    assert [type(r) for r in results] == [JudgeError] * 3
    assert {r.outcome for r in results if isinstance(r, JudgeError)} == {"closed"}


async def test_closing_the_judge_fails_the_metrics_waiting_in_an_open_group_at_once() -> None:
    async with schema_llm() as llm:
        judge = _judge(llm, "openai", batch={"enabled": True, "max_metrics": 4, "max_wait": 1})
        asked = asyncio.create_task(_ask_all(judge))  # three of four: the group waits for max_wait
        await asyncio.sleep(0.05)
        await _closed_at_once(judge, asked)
    assert llm.bodies == []  # the open group was never sent


async def test_closing_the_judge_fails_the_metrics_of_a_call_being_sent_at_once() -> None:
    async with schema_llm() as llm:
        llm.latency = 30
        judge = _judge(llm, "openai", batch={"enabled": True, "max_metrics": 3}, timeout=60)
        asked = asyncio.create_task(_ask_all(judge))  # three of three: sent at once, answered in 30 s
        for _ in range(200):
            if llm.bodies:
                break
            await asyncio.sleep(0.01)
        assert len(llm.bodies) == 1 and llm.batched_requests == 1
        await _closed_at_once(judge, asked)
