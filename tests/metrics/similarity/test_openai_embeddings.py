"""The ``openai`` embedding provider: the REAL openai SDK against a local OpenAI-compatible server (aiohttp on
127.0.0.1, started and stopped by each test) that speaks ``POST /v1/embeddings``."""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from pydantic import TypeAdapter

from evald.case import EvalCase
from evald.metrics.remote import MetricUnavailable
from evald.metrics.similarity.bertscore_like import BertscoreLikeMetric
from evald.metrics.similarity.embedding_cosine import EmbeddingCosineMetric
from evald.metrics.similarity.embeddings import EmbeddingProviderConfig, OpenAIEmbeddingProvider
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry
from tests.metrics.local_http import serve, unused_port

KEY_ENV = "EVALD_TEST_EMBEDDINGS_KEY"
KEY = "sk-test-0123456789"
#: hand-picked vectors: cos("Paris", "Paris, France") = 1*0.6 + 0*0.8 = 0.6
VECTORS = {"Paris": [1.0, 0.0], "Paris, France": [0.6, 0.8], "Lyon": [0.0, 1.0]}


def embeddings_server(
    vector_of: Callable[[str], list[float]] = lambda text: VECTORS[text],
    statuses: list[int] | None = None,
    delay: float = 0.0,
    drop_one: bool = False,
) -> Any:
    """An OpenAI-compatible /v1/embeddings handler; ``statuses`` are answered first (e.g. [500])."""
    pending = list(statuses or [])

    async def handler(request: web.Request) -> web.StreamResponse:
        if delay:
            await asyncio.sleep(delay)
        if pending:
            return web.json_response({"error": {"message": "upstream exploded", "type": "server_error"}},
                                     status=pending.pop(0))
        body = await request.json()
        data = [
            {"object": "embedding", "index": i, "embedding": vector_of(text)} for i, text in enumerate(body["input"])
        ]
        data.reverse()  # OpenAI does not promise the order: the provider sorts by index
        if drop_one:
            data.pop()
        tokens = sum(len(text.split()) for text in body["input"])
        return web.json_response({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    return handler


def provider(base_url: str, **config: Any) -> OpenAIEmbeddingProvider:
    validated = TypeAdapter(EmbeddingProviderConfig).validate_python(
        {"kind": "openai", "base_url": f"{base_url}/v1", "api_key_env": KEY_ENV, "model": "embed-small",
         "max_retries": 0, **config}
    )
    return OpenAIEmbeddingProvider(validated)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


async def test_the_sdk_sends_model_inputs_and_key_and_vectors_come_back_in_order() -> None:
    async with serve(embeddings_server()) as server:
        vectors = await provider(server.base_url, dimensions=2).embed(["Paris", "Lyon"])
    assert vectors == [[1.0, 0.0], [0.0, 1.0]]
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/embeddings")
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    sent = request.json()
    assert (sent["model"], sent["input"], sent["encoding_format"], sent["dimensions"]) == (
        "embed-small", ["Paris", "Lyon"], "float", 2)


async def test_large_inputs_are_sent_in_batches() -> None:
    async with serve(embeddings_server()) as server:
        vectors = await provider(server.base_url, batch_size=2).embed(["Paris", "Lyon", "Paris, France"])
    assert vectors == [VECTORS["Paris"], VECTORS["Lyon"], VECTORS["Paris, France"]]
    assert [r.json()["input"] for r in server.requests] == [["Paris", "Lyon"], ["Paris, France"]]


async def test_http_500_is_unavailable() -> None:
    async with serve(embeddings_server(statuses=[500])) as server:
        with pytest.raises(MetricUnavailable, match=r"openai embeddings at http://127\.0\.0\.1:\d+/v1 .*HTTP 500"):
            await provider(server.base_url).embed(["Paris"])


async def test_a_retry_recovers_from_one_500() -> None:
    async with serve(embeddings_server(statuses=[500])) as server:
        assert await provider(server.base_url, max_retries=1).embed(["Lyon"]) == [[0.0, 1.0]]
    assert len(server.requests) == 2


async def test_a_slow_endpoint_times_out() -> None:
    async with serve(embeddings_server(delay=5.0)) as server:
        started = time.perf_counter()
        with pytest.raises(MetricUnavailable, match="0.3s"):
            await provider(server.base_url, timeout=0.3).embed(["Paris"])
        assert time.perf_counter() - started < 2.0


async def test_an_unreachable_endpoint_is_unavailable() -> None:
    with pytest.raises(MetricUnavailable, match="cannot connect"):
        await provider(f"http://127.0.0.1:{unused_port()}", timeout=2).embed(["Paris"])


async def test_a_short_answer_is_unavailable() -> None:
    async with serve(embeddings_server(drop_one=True)) as server:
        with pytest.raises(MetricUnavailable, match="1 embeddings for 2 inputs"):
            await provider(server.base_url).embed(["Paris", "Lyon"])


async def test_a_missing_api_key_is_unavailable_and_sends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    async with serve(embeddings_server()) as server:
        with pytest.raises(MetricUnavailable, match=f"environment variable {KEY_ENV} .* is not set"):
            await provider(server.base_url).embed(["Paris"])
    assert server.requests == []


async def test_a_server_without_auth_needs_no_key() -> None:
    async with serve(embeddings_server()) as server:
        assert await provider(server.base_url, api_key_env=None).embed(["Paris"]) == [[1.0, 0.0]]


def metric_options(base_url: str, **provider_config: Any) -> dict[str, Any]:
    return {"provider": {"kind": "openai", "base_url": f"{base_url}/v1", "api_key_env": KEY_ENV,
                         "model": "embed-small", "max_retries": 0, **provider_config}}


async def test_embedding_cosine_through_the_sdk() -> None:
    async with serve(embeddings_server()) as server:
        metric = EmbeddingCosineMetric(options=metric_options(server.base_url))
        score = await metric.a_measure(EvalCase(output="Paris", expected=["Lyon", "Paris, France"]))
    # cos(Paris, Lyon) = 0; cos(Paris, "Paris, France") = 0.6 (hand-picked vectors): best is reference #1
    assert score is not None and math.isclose(score.value, 0.6) and score.metadata["best_reference"] == 1
    assert [r.json()["input"] for r in server.requests] == [["Paris", "Lyon", "Paris, France"]]  # one call


async def test_bertscore_like_sends_every_distinct_token_in_one_request() -> None:
    async with serve(embeddings_server(vector_of=lambda token: [1.0, float(len(token))])) as server:
        metric = BertscoreLikeMetric(options=metric_options(server.base_url))
        score = await metric.a_measure(EvalCase(output="the cat the", expected=["a cat", "the dog"]))
    assert [r.json()["input"] for r in server.requests] == [["the", "cat", "a", "dog"]]
    # every 3-letter token is [1, 3]: against "the dog" all cosines are 1, so F1 = 1 (reference #1); against
    # "a cat", "a" = [1, 1] has cos 4 / sqrt(2 * 10) = 0.894 with them, so recall < 1 there
    assert score is not None and math.isclose(score.value, 1.0) and score.metadata["best_reference"] == 1


@pytest.mark.parametrize(
    ("handler_options", "provider_config", "expected_error"),
    [
        ({"statuses": [500]}, {}, r"^MetricUnavailable: openai embeddings at .*HTTP 500"),
        ({"delay": 5.0}, {"timeout": 0.3}, r"^MetricUnavailable: openai embeddings at .*0\.3s"),
    ],
)
async def test_through_the_case_scorer_an_outage_is_an_error_outcome(
    handler_options: dict[str, Any], provider_config: dict[str, Any], expected_error: str
) -> None:
    async with serve(embeddings_server(**handler_options)) as server:
        metrics = [
            EmbeddingCosineMetric(options=metric_options(server.base_url, **provider_config)),
            BertscoreLikeMetric(options=metric_options(server.base_url, **provider_config)),
        ]
        scorer = CaseScorer(Telemetry(), metric_timeout=5.0)
        scored = await scorer.score(
            EvalCase(output="Paris", expected="Lyon"), [MetricBinding(m, "all", MetricFilter()) for m in metrics]
        )
    assert scored.scores == () and scored.skipped == ()
    assert [name for name, _ in scored.errors] == ["embedding_cosine", "bertscore_like"]
    for _, reason in scored.errors:
        assert re.search(expected_error, reason), reason
        assert KEY not in reason
