"""``pairwise``: the output against the expected answer, judged in both orders (position-bias control), through
the real openai and anthropic SDKs against the local stand-in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

from evald.case import EvalCase
from evald.judges.limiter import JudgeError, JudgeSkipped
from evald.judges.registry import close_judges, register_judge
from evald.judges.telemetry import JudgeTelemetry
from evald.metrics.llm_judge.pairwise import PairwiseMetric
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config, make_judge
from tests.metrics.judged_support import EMAIL, blocks_of, expect_malformed_replies, reply, sent_system

pytestmark = pytest.mark.integration
CASE = EvalCase(input=f"Capital of France? ({EMAIL})", output="Paris.", expected="It is Lyon.")


def answer_by_order(llm: FakeLLM, output_first: Reply, reference_first: Reply) -> None:
    """The stand-in answers ``output_first`` when response_a is the case's output, else ``reference_first`` (the
    two calls are concurrent, so their arrival order is not fixed)."""
    original: Callable[[web.Request], Awaitable[web.StreamResponse]] = llm._reply

    async def by_order(request: web.Request) -> web.StreamResponse:
        blocks = blocks_of(await request.json())
        llm.default = output_first if blocks["response_a"] == "Paris." else reference_first
        return await original(request)  # reads llm.default before its first await

    llm._reply = by_order  # type: ignore[method-assign]


async def test_a_consistent_win_for_the_output(sdk_llm: FakeLLM) -> None:
    answer_by_order(sdk_llm, reply("A is right", preference=1), reply("B is right", preference=5))
    score = await PairwiseMetric().a_measure(CASE)
    assert score is not None and score.value == 1.0 and score.passed  # ((5-1)/4 + (5-1)/4) / 2
    assert score.metadata == {"preference_output_first": 1, "preference_reference_first": 5,
                              "position_consistent": True, "reference": "expected", "judge": "default"}
    assert score.reason == "output first: A is right | reference first: B is right"
    assert len(sdk_llm.received) == 2
    orders = sorted((b["response_a"], b["response_b"]) for b in map(blocks_of, sdk_llm.received))
    assert orders == [("It is Lyon.", "Paris."), ("Paris.", "It is Lyon.")]
    assert all(blocks_of(body)["input"] == "Capital of France? ([EMAIL_1])" for body in sdk_llm.received)


async def test_a_consistent_win_for_the_reference_fails(sdk_llm: FakeLLM) -> None:
    answer_by_order(sdk_llm, reply(preference=4), reply(preference=2))
    score = await PairwiseMetric().a_measure(CASE)
    assert score is not None and score.value == 0.25 and not score.passed  # ((5-4)/4 + (2-1)/4) / 2
    assert score.metadata["position_consistent"] is True


async def test_a_judge_that_prefers_the_first_response_cancels_out(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("the first one", preference=1)  # whatever is shown first wins, in both orders
    score = await PairwiseMetric().a_measure(CASE)
    assert score is not None and score.value == 0.5 and score.passed  # ((5-1)/4 + (1-1)/4) / 2
    assert score.metadata["position_consistent"] is False


async def test_a_tie_is_half(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply(preference=3)
    score = await PairwiseMetric(options={"criteria": "Which is more concise?"}).a_measure(CASE)
    assert score is not None and score.value == 0.5 and score.metadata["position_consistent"] is True
    assert "Which is more concise?" in sent_system(sdk_llm)


async def test_a_malformed_verdict_in_either_order_is_an_error(sdk_llm: FakeLLM) -> None:
    await expect_malformed_replies(PairwiseMetric(), CASE, sdk_llm, '{"reasoning": "x", "preference": 0}',
                                   '{"reasoning": "x", "winner": "A"}')
    answer_by_order(sdk_llm, reply(preference=2), Reply(text='{"reasoning": "x", "preference": 6}'))
    with pytest.raises(JudgeError) as caught:
        await PairwiseMetric().a_measure(CASE)
    assert caught.value.outcome == "malformed"


async def test_without_output_or_expected_it_is_not_applicable(llm: FakeLLM) -> None:
    assert await PairwiseMetric().a_measure(EvalCase(input="q", output="a")) is None
    assert await PairwiseMetric().a_measure(EvalCase(input="q", expected="a")) is None
    assert llm.received == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_case_that_must_never_be_sent_skips_the_metric(provider: str) -> None:
    async with fake_llm() as server:
        config = judge_config(server, provider, never_send={"service_names": ["hr"]})
        register_judge(make_judge(config, JudgeTelemetry(CollectorRegistry())))
        try:
            with pytest.raises(JudgeSkipped) as caught:
                await PairwiseMetric().a_measure(replace(CASE, service_name="hr"))
            assert caught.value.reason == "never_send" and server.received == []
        finally:
            await close_judges()
