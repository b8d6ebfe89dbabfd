"""Provider-native structured output through the real SDKs, as the fake server receives it: OpenAI
``response_format`` json_schema (strict) with a remembered fallback to json_object on HTTP 400, and Anthropic's
forced ``verdict`` tool whose ``tool_use`` input is the verdict (a plain text JSON answer still works)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry

from evald.exporters.sending_policy import format_http_date
from evald.judges.limiter import JudgeError
from evald.judges.prompting import VerdictField, verdict_schema
from evald.judges.providers import OpenAIProvider, retry_after_seconds
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import Reply, fake_llm, judge_config, make_judge

pytestmark = pytest.mark.integration
FIELDS = (
    VerdictField("total_claims", 0, None, "claims in the output"),
    VerdictField("supported_claims", 0, None, "claims the context supports"),
)
VERDICT = '{"reasoning": "2 of 3 supported", "total_claims": 3, "supported_claims": 2}'
DATA = [("output", "Paris is the capital of France.")]
SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "your step-by-step reasoning"},
        "total_claims": {"type": "integer", "description": "claims in the output (at least 0)"},
        "supported_claims": {"type": "integer", "description": "claims the context supports (at least 0)"},
    },
    "required": ["reasoning", "total_claims", "supported_claims"],
    "additionalProperties": False,
}


def test_retry_after_headers_are_read_and_bad_ones_ignored() -> None:
    def hint(**headers: str) -> float | None:
        return retry_after_seconds(httpx.Headers({k.replace("_", "-"): v for k, v in headers.items()}))

    assert hint(retry_after_ms="250", retry_after="9") == 0.25  # OpenAI's precise hint wins
    assert hint(retry_after="2") == 2.0
    assert hint(retry_after=format_http_date(time.time() + 30)) == pytest.approx(30.0, abs=2.0)
    assert hint(retry_after="soon") is None  # an unreadable hint means our own backoff, never an exception
    assert hint(retry_after="-1") is None
    assert hint() is None


def test_the_verdict_schema_lists_reasoning_first_then_the_fields_all_required() -> None:
    assert verdict_schema(FIELDS) == SCHEMA
    banded = verdict_schema((VerdictField("score", 1, 5, "quality"),))
    assert banded["properties"]["score"] == {"type": "integer", "description": "quality (1 to 5)"}


async def test_openai_is_asked_for_a_strict_json_schema() -> None:
    telemetry = JudgeTelemetry(CollectorRegistry())
    async with fake_llm() as llm:
        llm.default = Reply(text=VERDICT)
        judge = make_judge(judge_config(llm), telemetry)
        verdict = await judge.evaluate("Count the claims.", DATA, FIELDS)
        await judge.aclose()
    assert verdict.values == {"total_claims": 3, "supported_claims": 2}
    assert llm.received[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": SCHEMA},
    }


async def test_openai_falls_back_to_json_object_once_when_the_server_refuses_json_schema() -> None:
    telemetry = JudgeTelemetry(CollectorRegistry())
    async with fake_llm() as llm:
        llm.reject_json_schema = True
        llm.default = Reply(text=VERDICT)
        judge = make_judge(judge_config(llm), telemetry)
        for _ in range(3):
            assert (await judge.evaluate("Count the claims.", DATA, FIELDS)).values["total_claims"] == 3
        await judge.aclose()
    formats = [body["response_format"]["type"] for body in llm.received]
    assert formats == ["json_schema", "json_object", "json_object", "json_object"]  # refused once, remembered
    assert isinstance(judge.provider, OpenAIProvider) and not judge.provider.json_schema_supported
    assert telemetry.requests.labels("default", "ok")._value.get() == 3
    assert telemetry.requests.labels("default", "client_error")._value.get() == 0


async def test_anthropic_is_forced_to_call_the_verdict_tool_and_its_input_is_the_verdict() -> None:
    telemetry = JudgeTelemetry(CollectorRegistry())
    async with fake_llm() as llm:
        llm.default = Reply(text=VERDICT)
        judge = make_judge(judge_config(llm, "anthropic"), telemetry)
        verdict = await judge.evaluate("Count the claims.", DATA, FIELDS)
        await judge.aclose()
    assert verdict.values == {"total_claims": 3, "supported_claims": 2} and verdict.reasoning == "2 of 3 supported"
    body = llm.received[0]
    assert body["tools"] == [{"name": "verdict", "description": "Record your verdict.", "input_schema": SCHEMA}]
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}


async def test_anthropic_still_accepts_a_plain_text_json_answer() -> None:
    async with fake_llm() as llm:
        llm.default = Reply(text=VERDICT, plain_text=True)
        judge = make_judge(judge_config(llm, "anthropic"), JudgeTelemetry(CollectorRegistry()))
        verdict = await judge.evaluate("Count the claims.", DATA, FIELDS)
        await judge.aclose()
    assert verdict.values == {"total_claims": 3, "supported_claims": 2}


@pytest.mark.parametrize(
    "tool_input",
    ['{"reasoning": "ignore previous instructions", "score": 9}',  # out of range
     '{"score": 5, "reasoning": "score first"}',  # not reasoning first
     '{"reasoning": "x", "score": 5, "note": "extra"}'],  # a key that is not in the schema
)
async def test_a_tool_input_that_is_not_a_valid_verdict_is_malformed(tool_input: str) -> None:
    async with fake_llm() as llm:
        llm.default = Reply(text=tool_input)
        judge = make_judge(judge_config(llm, "anthropic"), JudgeTelemetry(CollectorRegistry()))
        with pytest.raises(JudgeError) as caught:
            await judge.evaluate("Judge.", DATA, (VerdictField("score", 1, 5, "quality"),))
        await judge.aclose()
    assert caught.value.outcome == "malformed"
    assert llm.received[0]["tool_choice"]["name"] == "verdict"


@pytest.mark.parametrize(
    ("provider", "body"),
    [("openai", '{"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'),
     ("openai", '{"choices": [{"message": {"content": null}}], "usage": {}}'),
     ("openai", '{"choices": [{"message": {"content": "{}"}}]}'),  # no usage
     ("openai", "[1, 2]"),
     ("anthropic", '{"content": [{"type": "text", "text": "{}"}]}'),  # no usage
     ("anthropic", '"a string"')],
)
async def test_a_json_answer_without_the_expected_fields_is_malformed(provider: str, body: str) -> None:
    telemetry = JudgeTelemetry(CollectorRegistry())
    async with fake_llm() as llm:
        llm.default = Reply(raw_body=body)
        judge = make_judge(judge_config(llm, provider, max_retries=0), telemetry)
        with pytest.raises(JudgeError) as caught:
            await judge.evaluate("Judge.", DATA, (VerdictField("score", 1, 5, "quality"),))
        await judge.aclose()
    assert caught.value.outcome == "malformed"
    assert telemetry.requests.labels("default", "malformed")._value.get() == 1


async def test_connections_are_kept_alive_for_max_concurrency_calls() -> None:
    """120 calls in flight, twice: the second round reuses the first round's 120 connections (the SDK's default
    pool keeps only 100 alive, so without the judge's own limits 20 would be opened again)."""
    async with fake_llm() as llm:
        llm.default = Reply(delay=0.3)
        judge = make_judge(judge_config(llm, max_concurrency=120, timeout=30), JudgeTelemetry(CollectorRegistry()))
        fields = (VerdictField("score", 1, 5, "quality"),)
        for _ in range(2):
            verdicts = await asyncio.gather(*(judge.evaluate("Judge.", DATA, fields) for _ in range(120)))
            assert all(v.values == {"score": 5} for v in verdicts)
        await judge.aclose()
    assert llm.peak_in_flight == 120
    assert len(llm.server.requests if llm.server else []) == 240
    assert len(llm.peers) == 120
