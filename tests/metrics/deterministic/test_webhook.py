"""``webhook`` against a real aiohttp server on 127.0.0.1, started and stopped by each test."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from aiohttp import web
from pydantic import ValidationError

from evald.case import Document, EvalCase, ToolCall
from evald.config.loader import parse_config
from evald.metrics.deterministic.webhook import WebhookMetric
from evald.metrics.remote import MetricUnavailable
from evald.pipeline.bindings import MetricBinding, MetricFilter, build_bindings
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry
from tests.metrics.local_http import serve, unused_port

CASE = EvalCase(
    input="What is the capital of France?", output="Paris", expected="Paris",
    context=(Document(id="d1", content="Paris is the capital of France."),),
    tool_calls=(ToolCall("search", {"q": "capital of France"}, "Paris", id="c1"),),
    metadata={"tenant": "acme"}, trace_id="0af7651916cd43dd8448eb211c80319c", span_id="b7ad6b7169203331",
    scope="llm_call",
)
TOKEN = "s3cr3t-token-value"


def answering(payload: Any = None, status: int = 200, text: str | None = None, delay: float = 0.0) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        if delay:
            await asyncio.sleep(delay)
        if text is not None:
            return web.Response(status=status, text=text, content_type="application/json")
        return web.json_response(payload, status=status)

    return handler


def webhook(url: str, **options: Any) -> WebhookMetric:
    return WebhookMetric(options={"url": url, **options})


async def test_success_posts_the_case_and_reads_the_score() -> None:
    reply = {"score": 0.75, "reason": "close enough", "passed": False, "metadata": {"judge": "rubric-v2"}}
    async with serve(answering(reply)) as server:
        metric = webhook(f"{server.base_url}/score", headers={"Authorization": f"Bearer {TOKEN}"})
        score = await metric.a_measure(CASE)
        await metric.aclose()
    assert score is not None
    # 0.75 >= default threshold 0.5: passed, whatever the service's own "passed" says
    assert (score.value, score.passed, score.threshold) == (0.75, True, 0.5)
    assert score.reason == "close enough" and score.metadata == {"judge": "rubric-v2"}
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/score")
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Content-Type"] == "application/json"
    sent = request.json()
    assert sent == CASE.to_dict()
    assert sent["context"] == [{"id": "d1", "content": "Paris is the capital of France.", "score": None,
                                "metadata": None}]
    assert sent["tool_calls"][0]["arguments"] == {"q": "capital of France"}
    assert (sent["trace_id"], sent["span_id"], sent["scope"]) == (CASE.trace_id, CASE.span_id, "llm_call")


async def test_a_score_below_the_threshold_fails_and_reason_and_metadata_are_optional() -> None:
    async with serve(answering({"score": 0})) as server:
        score = await webhook(server.base_url).a_measure(CASE)
        high = await WebhookMetric(threshold=0.9, options={"url": server.base_url}).a_measure(CASE)
    assert score is not None and (score.value, score.passed, score.reason, dict(score.metadata)) == (
        0.0, False, None, {})
    assert high is not None and not high.passed  # 0 < 0.9


async def test_a_null_score_is_not_applicable() -> None:
    async with serve(answering({"score": None, "reason": "no expected answer"})) as server:
        assert await webhook(server.base_url).a_measure(EvalCase(output="Paris")) is None


async def test_http_500_is_an_error_naming_the_status_and_hiding_the_query() -> None:
    async with serve(answering(text="scorer crashed", status=500)) as server:
        with pytest.raises(MetricUnavailable) as info:
            await webhook(f"{server.base_url}/score?token={TOKEN}").a_measure(CASE)
    message = str(info.value)
    assert "HTTP 500" in message and "scorer crashed" in message and f"{server.base_url}/score" in message
    assert TOKEN not in message


async def test_a_slow_service_times_out() -> None:
    async with serve(answering({"score": 1.0}, delay=5.0)) as server:
        started = time.perf_counter()
        with pytest.raises(MetricUnavailable, match=r"no answer within 0\.2s"):
            await webhook(server.base_url, timeout="200ms").a_measure(CASE)
        assert time.perf_counter() - started < 2.0


async def test_an_unreachable_port_is_an_error() -> None:
    with pytest.raises(MetricUnavailable, match="ConnectError"):
        await webhook(f"http://127.0.0.1:{unused_port()}/score", timeout=2).a_measure(CASE)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json at all", "not JSON"),
        ("[0.5]", "without a 'score' key"),
        ('{"value": 0.5}', "without a 'score' key"),
        ('{"score": 1.5}', "score 1.5, not a number in"),
        ('{"score": -0.1}', "score -0.1, not a number in"),
        ('{"score": "0.5"}', "not a number in"),
        ('{"score": true}', "score True, not a number in"),
        ('{"score": NaN}', "not JSON"),
        ('{"score": 0.5, "reason": 3}', "'reason' that is not a string"),
        ('{"score": 0.5, "metadata": [1]}', "'metadata' that is not an object"),
    ],
)
async def test_a_malformed_answer_is_an_error(body: str, message: str) -> None:
    async with serve(answering(text=body)) as server:
        with pytest.raises(MetricUnavailable, match=message):
            await webhook(server.base_url).a_measure(CASE)


async def test_an_oversized_answer_is_an_error() -> None:
    async with serve(answering(text='{"score": 1, "pad": "' + "x" * (2 << 20) + '"}')) as server:
        with pytest.raises(MetricUnavailable, match="over 1048576 bytes"):
            await webhook(server.base_url).a_measure(CASE)


async def test_the_client_is_kept_per_loop() -> None:
    async with serve(answering({"score": 1})) as server:
        metric = webhook(server.base_url)
        await metric.a_measure(CASE)
        client = metric._client
        await metric.a_measure(CASE)
        assert metric._client is client is not None
        await metric.aclose()
        assert metric._client is None


def test_a_new_event_loop_gets_a_new_client() -> None:
    async def once(metric: WebhookMetric) -> float | None:
        async with serve(answering({"score": 0.5})) as server:
            metric.options = metric.Options.model_validate({"url": server.base_url})
            score = await metric.a_measure(CASE)
        return None if score is None else score.value

    metric = webhook("http://127.0.0.1:1/")
    assert asyncio.run(once(metric)) == 0.5
    assert asyncio.run(once(metric)) == 0.5  # the first loop's client is closed with its loop; a new one serves


async def test_through_the_case_scorer_an_outage_is_an_error_outcome_without_secrets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metric = webhook(f"http://127.0.0.1:{unused_port()}/score", headers={"X-Api-Key": TOKEN}, timeout=2)
    scorer = CaseScorer(Telemetry(), metric_timeout=5.0)
    with caplog.at_level(logging.DEBUG):
        scored = await scorer.score(CASE, [MetricBinding(metric, "all", MetricFilter())])
    assert scored.scores == () and scored.skipped == ()
    [(name, reason)] = scored.errors
    assert name == "webhook" and reason.startswith("MetricUnavailable: webhook http://127.0.0.1:")
    assert TOKEN not in reason and TOKEN not in caplog.text


async def test_through_the_case_scorer_a_slow_service_is_an_error_outcome() -> None:
    async with serve(answering({"score": 1.0}, delay=5.0)) as server:
        scorer = CaseScorer(Telemetry(), metric_timeout=0.3)  # the pipeline's deadline is shorter than ours
        scored = await scorer.score(CASE, [MetricBinding(webhook(server.base_url), "all", MetricFilter())])
    assert scored.errors == (("webhook", "timed out after 0.3s"),)


async def test_header_values_come_from_the_environment_in_config() -> None:
    async with serve(answering({"score": 1.0})) as server:
        text = (
            "metrics:\n"
            f"  - {{ kind: webhook, options: {{ url: '{server.base_url}/score', "
            "headers: { Authorization: 'Bearer ${env:SCORER_TOKEN}' }, timeout: 5s } }\n"
        )
        config = parse_config(text, environ={"SCORER_TOKEN": TOKEN})
        [binding] = build_bindings(config.metrics)
        score = await binding.metric.a_measure(CASE)
    assert score is not None and score.value == 1.0
    assert server.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in repr(binding.metric.options)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"url": "ftp://example.com/score"},
        {"url": "not a url"},
        {"url": "http://127.0.0.1:8080", "timeout": 0},
        {"url": "http://127.0.0.1:8080", "headers": {"Bad Name": "x"}},
        {"url": "http://127.0.0.1:8080", "headers": {"X-Token": f"{TOKEN}\r\nX-Injected: 1"}},
        {"url": "http://127.0.0.1:8080", "method": "PUT"},
    ],
)
def test_invalid_options_are_rejected_without_echoing_header_values(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        WebhookMetric(options=options)
    assert TOKEN not in str(info.value)
