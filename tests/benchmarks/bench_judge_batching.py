"""Judge calls, prompt tokens and cost per 1,000 cases: single vs batched judging, and Redis round trips per judged
case with shared governance (issue 19).

    python3 tests/benchmarks/bench_judge_batching.py [--cases 1000] [--latency 0.02]

The corpus (tests/testdata/corpus: every convention's chat, tool, RAG, PII, streaming and failed-call traces, 48
captures) replicated with fresh ids to ``--cases`` traces, replayed in process (``evald replay``'s pipeline) with
five judged metrics on each trace case (answer_relevancy, geval, toxicity, bias, hallucination; the verdict cache
off, since replicated content would otherwise be judged once) against the stand-in tests/judges/batch_llm.py
(real openai SDK), which answers any verdict schema after ``--latency`` seconds and reports usage as one token
per 4 bytes of the request body and of its answer. Modes: single (one call per metric), batched with
``max_metrics`` 4 and 8. Cost: gpt-4o-mini's price from evald's price table on those tokens.

Then the same replay with ``coordination`` on a real redis-server (started here, ``--save "" --appendonly no``)
and a judge with a daily budget, RPM and TPM: Redis commands per judged case (``INFO stats``
``total_commands_processed``; every command of shared governance is its own round trip), with the cache off and
on. ``redis.timeout`` is 10 s here: ``evald replay`` maps its input in large synchronous steps (its event loop
stalls ~1.9 s per 1,000 traces), which would pass the default 1 s deadline and send calls to the fallback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402

from evald.config.loader import parse_config  # noqa: E402
from evald.judges.coordination.link import RedisLink  # noqa: E402
from evald.pricing import find_price, shipped_prices  # noqa: E402
from evald.replay import replay  # noqa: E402
from tests.judges.batch_llm import SchemaLLM, schema_llm  # noqa: E402
from tests.judges.load_traces import renumbered  # noqa: E402
from tests.judges.redis_server import RedisServer  # noqa: E402

CORPUS = ROOT / "tests" / "testdata" / "corpus"
JUDGED = ("answer_relevancy", "geval", "toxicity", "bias", "hallucination")
PER_FILE = 50


def write_cases(directory: Path, cases: int) -> None:
    templates = [trace_service_pb2.ExportTraceServiceRequest.FromString(p.read_bytes())
                 for p in sorted(CORPUS.glob("*/*.pb")) if not p.name.endswith(".logs.pb")]
    for start in range(1, cases + 1, PER_FILE):
        request = trace_service_pb2.ExportTraceServiceRequest()
        for counter in range(start, min(start + PER_FILE, cases + 1)):
            request.resource_spans.extend(renumbered(templates[counter % len(templates)], counter).resource_spans)
        (directory / f"cases_{start:06d}.pb").write_bytes(request.SerializeToString())


def config_text(llm: SchemaLLM, batch: int, coordination: str = "", cache: bool = False) -> str:
    batch_block = f"batch: {{ enabled: true, max_metrics: {batch} }}," if batch else ""
    return f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
pipeline: {{ workers: 32, metric_timeout: 30s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: sk-bench, base_url: "{llm.base_url}/v1", timeout: 10s,
             max_concurrency: 64, {batch_block} cache: {{ enabled: {str(cache).lower()} }} {coordination} }}
metrics:
  - {{ kind: answer_relevancy, scope: trace }}
  - {{ kind: geval, scope: trace, options: {{ criteria: "The answer is correct, complete and polite." }} }}
  - {{ kind: toxicity, scope: trace }}
  - {{ kind: bias, scope: trace }}
  - {{ kind: hallucination, scope: trace }}
"""


async def run(directory: Path, llm: SchemaLLM, text: str) -> dict[str, Any]:
    before = (len(llm.bodies), llm.prompt_tokens, llm.answer_tokens, llm.parts_asked)
    started = time.perf_counter()
    result = await replay([directory], parse_config(text))
    wall = time.perf_counter() - started
    judged_cases = sum(1 for c in result.scored if any(s.name in JUDGED for s in c.scores))
    verdicts = sum(1 for c in result.scored for s in c.scores if s.name in JUDGED)
    errors = sum(1 for c in result.scored for name, _ in c.errors if name in JUDGED)
    calls, prompt, answer, parts = (now - was for now, was in zip(
        (len(llm.bodies), llm.prompt_tokens, llm.answer_tokens, llm.parts_asked), before, strict=True))
    return {"cases": len(result.scored), "judged_cases": judged_cases, "verdicts": verdicts, "errors": errors,
            "calls": calls, "prompt_tokens": prompt, "answer_tokens": answer, "parts": parts, "wall": wall}


_NOT_GOVERNANCE = {"hello", "info", "ping"}  # per new connection, and this benchmark's own reads


def redis_commands(server: RedisServer) -> dict[str, int]:
    """Calls per command since the server started (``INFO commandstats``)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
        sock.sendall(b"INFO commandstats\r\n")
        data = b""
        while not data.endswith(b"\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    found = re.findall(r"cmdstat_([a-z|]+):calls=(\d+)", data.decode())
    return {name: int(calls) for name, calls in found}


ROUND_TRIPS: dict[str, int] = {}
_run = RedisLink.run


async def _counted(self: RedisLink, operation: str, call: Any) -> Any:
    ROUND_TRIPS[operation] = ROUND_TRIPS.get(operation, 0) + 1
    return await _run(self, operation, call)


RedisLink.run = _counted  # type: ignore[method-assign]  # every Redis call of shared governance goes through it


def governance_round_trips(before: dict[str, int], after: dict[str, int]) -> tuple[int, str]:
    delta = {name: calls - before.get(name, 0) for name, calls in after.items() if name not in _NOT_GOVERNANCE}
    delta = {name: calls for name, calls in delta.items() if calls}
    return sum(delta.values()), ", ".join(f"{name} {calls}" for name, calls in sorted(delta.items()))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.02)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("evald.pipeline.content_diagnosis").setLevel(logging.ERROR)  # the no-content captures
    found = find_price("gpt-4o-mini", shipped_prices().models)
    assert found is not None
    price = found[1]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "cases"
        directory.mkdir()
        write_cases(directory, args.cases)
        async with schema_llm() as llm:
            llm.latency = args.latency
            print(f"{args.cases} traces, judged metrics {', '.join(JUDGED)}; stand-in latency {args.latency:g}s")
            print(f"{'mode':<16}{'judged cases':>13}{'verdicts':>9}{'errors':>7}{'calls/1k':>10}"
                  f"{'prompt tok/1k':>15}{'answer tok/1k':>15}{'USD/1k':>10}{'wall s':>8}")
            for label, batch in (("single", 0), ("batched (4)", 4), ("batched (8)", 8)):
                r = await run(directory, llm, config_text(llm, batch))
                per = 1000 / max(1, r["judged_cases"])
                usd = (r["prompt_tokens"] * price.input + r["answer_tokens"] * price.output) / 1e6
                print(f"{label:<16}{r['judged_cases']:>13}{r['verdicts']:>9}{r['errors']:>7}{r['calls'] * per:>10.0f}"
                      f"{r['prompt_tokens'] * per:>15.0f}{r['answer_tokens'] * per:>15.0f}{usd * per:>10.4f}"
                      f"{r['wall']:>8.1f}")
            server = RedisServer(Path(tmp)).start()
            try:
                print("\nRedis commands (round trips) per judged case, coordination with budget.max_cost_usd.day, "
                      "requests_per_minute, tokens_per_minute:")
                for label, batch, cache in (("single, no cache", 0, False), ("batched (4), no cache", 4, False),
                                            ("single, cache", 0, True), ("batched (4), cache", 4, True)):
                    coordination = (f', requests_per_minute: 1000000, tokens_per_minute: 1000000000, budget: '
                                    f'{{ max_cost_usd: {{ day: 1000 }} }}, coordination: {{ redis: {{ url: '
                                    f'"{server.url}", key_prefix: "b{batch}{int(cache)}", timeout: 10s }} }}')
                    before = redis_commands(server)
                    ROUND_TRIPS.clear()
                    r = await run(directory, llm, config_text(llm, batch, coordination, cache))
                    commands, _ = governance_round_trips(before, redis_commands(server))
                    trips = sum(ROUND_TRIPS.values())
                    detail = ", ".join(f"{op} {n}" for op, n in sorted(ROUND_TRIPS.items()))
                    executed = commands / max(1, r["judged_cases"])
                    print(f"  {label:<24} {trips / max(1, r['judged_cases']):6.2f} round trips per judged case, "
                          f"{trips / max(1, r['calls']):5.2f} per judge call; {executed:6.1f}"
                          f" commands executed per judged case (scripts' inside) ({r['calls']} judge calls, "
                          f"{r['judged_cases']} judged cases; {detail})")
            finally:
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
