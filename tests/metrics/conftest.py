"""Fixtures shared by the metric tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.judges.fake_llm import FakeLLM
from tests.metrics.judged_support import judged_llm


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLM]:
    """A fake OpenAI-compatible server registered as judge ``default`` (for the judged metrics' tests)."""
    async with judged_llm() as server:
        yield server


@pytest.fixture(params=["openai", "anthropic"])
async def sdk_llm(request: pytest.FixtureRequest) -> AsyncIterator[FakeLLM]:
    """The same stand-in registered as judge ``default``, reached through the real openai SDK, then the anthropic
    SDK (a test using it runs once per SDK)."""
    async with judged_llm(request.param) as server:
        yield server
