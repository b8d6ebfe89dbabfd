"""Shared helpers for tests of judged metrics: a fake judge behind the real openai SDK, and what it received."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from evald.case import EvalCase
from evald.judges.limiter import JudgeError
from evald.judges.registry import close_judges, register_judge
from evald.judges.telemetry import JudgeTelemetry
from evald.metrics.base import BaseMetric
from tests.judges.fake_llm import FakeLLM, Reply, fake_llm, judge_config, make_judge

_BLOCK = re.compile(r'<(data-[0-9a-f]{12}) name="([^"]+)">\n(.*?)\n</\1>', re.DOTALL)
EMAIL = "jane.doe@example.com"


@asynccontextmanager
async def judged_llm(provider: str = "openai") -> AsyncIterator[FakeLLM]:
    """A fake OpenAI-compatible (and Anthropic Messages) server registered as judge ``default``, reached through the
    ``provider``'s real SDK."""
    async with fake_llm() as server:
        register_judge(make_judge(judge_config(server, provider), JudgeTelemetry(CollectorRegistry())))
        try:
            yield server
        finally:
            await close_judges()


def verdict(score: int, reasoning: str = "judged") -> Reply:
    return Reply(text=f'{{"reasoning": "{reasoning}", "score": {score}}}')


def sent_blocks(llm: FakeLLM, index: int = -1) -> dict[str, str]:
    """label -> text of the delimited data blocks in one received request (the user message; either SDK's shape)."""
    return blocks_of(llm.received[index])


def blocks_of(body: dict[str, Any]) -> dict[str, str]:
    """label -> text of the delimited data blocks in one request body (OpenAI or Anthropic shape)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return {label: text for _, label, text in _BLOCK.findall(user)}


def sent_system(llm: FakeLLM, index: int = -1) -> str:
    """The system prompt of one received request (OpenAI: the system message; Anthropic: the ``system`` key)."""
    body = llm.received[index]
    if "system" in body:
        return str(body["system"])
    return str(next(m["content"] for m in body["messages"] if m["role"] == "system"))


def reply(reasoning: str = "judged", **values: int) -> Reply:
    """A verdict with the given integer fields, in order after ``reasoning``."""
    return Reply(text=json.dumps({"reasoning": reasoning, **values}))


async def expect_malformed_replies(metric: BaseMetric, case: EvalCase, llm: FakeLLM, *texts: str) -> None:
    """Each scripted answer text is an error outcome (JudgeError 'malformed'), never a score; so is a prose verdict."""
    for text in (*texts, "score 1.0"):
        llm.default = Reply(text=text)
        with pytest.raises(JudgeError) as caught:
            await metric.a_measure(case)
        assert caught.value.outcome == "malformed", text


async def expect_malformed(metric: BaseMetric, case: EvalCase, llm: FakeLLM) -> None:
    """An out-of-band score and a prose 'verdict' are both errors (JudgeError 'malformed'), never a score."""
    for text in ('{"reasoning": "x", "score": 9}', "score 1.0"):
        llm.default = Reply(text=text)
        with pytest.raises(JudgeError) as caught:
            await metric.a_measure(case)
        assert caught.value.outcome == "malformed"
