"""The explorer's JSON API and pages on a real AdminHttpServer (127.0.0.1:0): list, filters, case view, bounds,
redaction, show_content, auth (401 without the token) and a separate endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from evald.case import Dimension, EvalCase, Message, Score
from evald.explorer.config import ExplorerConfig
from evald.explorer.server import Explorer
from evald.exporters.admin_http import AdminHttpServer
from evald.interfaces import MappingResult, NotEvaluable
from evald.model import AssembledTrace, ScoredCase, SpanRecord
from evald.receivers.auth import ReceiverAuthConfig
from evald.telemetry import Telemetry

pytestmark = pytest.mark.integration
API = "/debug/evaluations/api"
EMAIL = "jane.doe@example.com"
TEMPLATE = "https://grafana.example/explore?left={%22queries%22:[{%22query%22:%22{trace_id}%22}]}&span={span_id}"


def case(i: int, service: str, model: str, **fields: object) -> EvalCase:
    return EvalCase(trace_id=f"{i:032x}", span_id=f"{i:016x}", service_name=service, model=model, **fields)  # type: ignore[arg-type]


def batch() -> list[ScoredCase]:
    return [
        ScoredCase(case(1, "checkout", "gpt-4o", input=f"mail me at {EMAIL}", output="ok"),
                   (Score("faithfulness", 0.2, 0.7, reason=f"the answer invents a refund for {EMAIL}",
                          metadata={"judge": "default", "judge_score": 2, "explanation": "claim 2 unsupported"}),
                    Score("latency", 0.9, 0.5, dimension=Dimension.PERFORMANCE)),
                   skipped=(("context_recall", "missing_expected"),)),
        ScoredCase(case(2, "checkout", "gpt-4o-mini", input="hi", output="<script>alert(1)</script>"),
                   (Score("faithfulness", 0.9, 0.7),), errors=(("toxicity", "judge_timeout"),)),
        ScoredCase(case(3, "search", "gpt-4o", input="q", output="a",
                        messages=(Message("user", f"I am {EMAIL}"),)), (Score("latency", 0.1, 0.5),)),
    ]


async def serve(config: ExplorerConfig, auth: ReceiverAuthConfig | None = None) -> tuple[Explorer, AdminHttpServer]:
    explorer = Explorer(config, Telemetry(), auth)
    server = AdminHttpServer("127.0.0.1:0", Telemetry(), routes=explorer.register)
    await server.start()
    await explorer.exporter.export(batch())
    trace = AssembledTrace("f" * 32, (SpanRecord("f" * 32, "e" * 16, None, "chat", 1, 0, 1, {},
                                                  resource={"service.name": "search"}),))
    explorer.observe(trace, MappingResult(not_evaluable=(NotEvaluable("no_output", "genai", f"for {EMAIL}"),)))
    return explorer, server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    _, server = await serve(ExplorerConfig(trace_url_template=TEMPLATE))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
        yield client
    await server.shutdown(2.0)


async def items(client: httpx.AsyncClient, **query: str) -> list[dict[str, object]]:
    response = await client.get(f"{API}/evaluations", params=query)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["matched"] == len(body["items"]) or "limit" in query
    return list(body["items"])


async def test_list_newest_first_with_not_evaluable(client: httpx.AsyncClient) -> None:
    listed = await items(client)
    assert [i["trace_id"] for i in listed] == ["f" * 32, f"{3:032x}", f"{2:032x}", f"{1:032x}"]
    assert listed[0]["kind"] == "not_evaluable" and listed[0]["not_evaluable"] == {"reason": "no_output",
                                                                                   "convention": "genai"}
    assert listed[0]["service"] == "search"
    assert listed[3]["outcomes"] == {"faithfulness": "fail", "latency": "pass", "context_recall": "skipped"}
    assert listed[3]["failing"] is True and listed[2]["failing"] is False


@pytest.mark.parametrize(("query", "expected"), [
    ({"metric": "faithfulness"}, [2, 1]),
    ({"metric": "faithfulness", "outcome": "fail"}, [1]),
    ({"outcome": "pass"}, [2, 1]),  # a passing score of any metric
    ({"outcome": "skipped"}, [1]),
    ({"outcome": "error"}, [2]),
    ({"outcome": "not_evaluable"}, [int("f" * 32, 16)]),
    ({"service": "checkout", "model": "gpt-4o-mini"}, [2]),
    ({"metric": "latency", "outcome": "fail", "service": "search"}, [3]),
    ({"scope": "trace", "limit": "2"}, [int("f" * 32, 16), 3]),
    ({"until": "2001-01-01T00:00:00Z"}, []),
    ({"since": "2001-01-01T00:00:00Z", "metric": "latency"}, [3, 1]),
    ({"last": "1h", "outcome": "fail"}, [3, 1]),
])
async def test_filters(client: httpx.AsyncClient, query: dict[str, str], expected: list[int]) -> None:
    assert [int(str(i["trace_id"]), 16) for i in await items(client, **query)] == expected


async def test_bad_filter_is_a_400_naming_it(client: httpx.AsyncClient) -> None:
    response = await client.get(f"{API}/evaluations", params={"outcome": "flaky"})
    assert response.status_code == 400 and "outcome" in response.json()["error"]
    page = await client.get("/debug/evaluations", params={"since": "yesterday"})
    assert page.status_code == 400 and "since" in page.text


async def test_case_view_redacted_by_default(client: httpx.AsyncClient) -> None:
    first = (await items(client, metric="faithfulness", outcome="fail"))[0]
    record = (await client.get(str(first["api_url"]))).json()
    assert record["redacted"] is True and record["redactions"] == {"EMAIL": 1}
    assert record["case"]["input"] == "mail me at [EMAIL_1]"
    faithfulness = next(s for s in record["scores"] if s["name"] == "faithfulness")
    assert faithfulness["reason"] == "the answer invents a refund for [EMAIL_1]"  # same placeholder in the record
    assert (faithfulness["passed"], faithfulness["threshold"], faithfulness["value"]) == (False, 0.7, 0.2)
    assert faithfulness["explanation"] == "claim 2 unsupported" and faithfulness["judge"] == "default"
    assert record["skipped"] == [{"metric": "context_recall", "reason": "missing_expected"}]
    assert record["trace_url"] == TEMPLATE.replace("{trace_id}", f"{1:032x}").replace("{span_id}", f"{1:016x}")
    assert EMAIL not in (await client.get(str(first["api_url"]))).text
    page = await client.get(str(first["url"]))
    assert page.status_code == 200 and EMAIL not in page.text and "[EMAIL_1]" in page.text
    assert "claim 2 unsupported" in page.text and "missing_expected" in page.text
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")


async def test_pages_escape_content(client: httpx.AsyncClient) -> None:
    second = (await items(client, outcome="error"))[0]
    page = (await client.get(str(second["url"]))).text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    listing = (await client.get("/debug/evaluations", params={"service": "checkout"})).text
    assert "faithfulness: fail" in listing and "<script>" not in listing
    assert (await client.get("/debug/evaluations/case/999")).status_code == 404
    assert (await client.get(f"{API}/evaluations/abc")).status_code == 400


async def test_show_content_shows_raw_content() -> None:
    _, server = await serve(ExplorerConfig(show_content=True))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
            record = (await client.get(f"{API}/evaluations/1")).json()
            assert record["redacted"] is False and record["case"]["input"] == f"mail me at {EMAIL}"
            assert record["trace_url"] is None
    finally:
        await server.shutdown(2.0)


async def test_bounds_in_count_keep_failing_longest() -> None:
    explorer, server = await serve(ExplorerConfig(max_items=5))
    try:
        await explorer.exporter.export([ScoredCase(case(100 + i, "bulk", "m"), (Score("latency", 0.9, 0.5),))
                                        for i in range(50)])
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
            stats = (await client.get(f"{API}/stats")).json()
            listed = await items(client)
        assert stats["items"] == 5 and len(listed) == 5
        failing = [i for i in listed if i["failing"]]
        assert {str(i["trace_id"]) for i in failing} == {f"{1:032x}", f"{3:032x}"}  # survived 50 passing cases
        assert {"ring": "other", "reason": "count", "count": 49} in stats["evicted"]  # 4 + 50 arrived, 5 kept
    finally:
        await server.shutdown(2.0)


async def test_bounds_in_bytes() -> None:
    explorer, server = await serve(ExplorerConfig(max_mib=0.05))  # 52 KB
    try:
        await explorer.exporter.export([ScoredCase(case(100 + i, "bulk", "m", output="x" * 4000),
                                                   (Score("latency", 0.9, 0.5),)) for i in range(40)])
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
            stats = (await client.get(f"{API}/stats")).json()
        assert stats["bytes"] <= stats["max_bytes"] == int(0.05 * 1024 * 1024)
        assert 5 < stats["items"] < 15 and stats["failing_items"] == 2
        assert any(e["reason"] == "bytes" and e["ring"] == "other" for e in stats["evicted"])
    finally:
        await server.shutdown(2.0)


async def test_auth_refuses_without_the_token() -> None:
    auth = ReceiverAuthConfig(bearer_tokens=[SecretStr("s3cret-token")], api_key_header="x-api-key")
    _, server = await serve(ExplorerConfig(), auth)  # the receivers' auth, reused
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}", timeout=5) as client:
            for path in ("/debug/evaluations", "/debug/evaluations/case/1", f"{API}/evaluations", f"{API}/stats"):
                refused = await client.get(path)
                assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
                assert "s3cret" not in refused.text
                wrong = await client.get(path, headers={"Authorization": "Bearer nope"})
                assert wrong.status_code == 401
                assert (await client.get(path, headers={"Authorization": "Bearer s3cret-token"})).status_code == 200
                assert (await client.get(path, headers={"x-api-key": "s3cret-token"})).status_code == 200
    finally:
        await server.shutdown(2.0)


async def test_separate_endpoint_serves_only_the_explorer() -> None:
    explorer = Explorer(ExplorerConfig(endpoint="127.0.0.1:0"), Telemetry())
    await explorer.exporter.start()
    try:
        await explorer.exporter.export(batch())
        port = explorer.server.bound_port
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            assert len(await items(client)) == 3
            assert (await client.get("/metrics")).status_code == 404
    finally:
        await explorer.exporter.shutdown(2.0)
