"""Sustained judged cases per second through the pipeline vs the ideal of a judge answering after a fixed latency.

    python3 tests/benchmarks/bench_judges.py --duration 120 [--latency 0.2] [--concurrency 32] [--rate 0]

A local OpenAI-compatible server (tests/judges/fake_llm.py in a subprocess, so its CPU is not evald's) answers
every chat completion after ``--latency`` seconds. In this process, evald's real pipeline runs (window ->
mapping -> bounded queue -> workers -> CaseScorer -> judge limiter -> the real openai SDK), with one judged metric
(``answer_relevancy``) on the trace case of every trace and the judge at ``max_concurrency: --concurrency``;
the verdict cache is off (every trace is new anyway). A feeder replicates the GenAI-semconv corpus chat/RAG
traces with fresh ids into the assembly window: with ``--rate 0`` as fast as backpressure allows (the bounded
queue stays full: saturation), else at that many traces per second.

Reference, side by side in the same run (before and after evald, ``--reference-seconds`` each per path): the
bare official openai SDK, alone in this process, keeping ``--concurrency`` chat completions in flight against the
same server with the same request shape (an ``answer_relevancy`` prompt of a corpus case and the verdict JSON
schema), on two paths: ``chat.completions.create`` (typed params and response models) and the SDK's low-level
``client.post("/chat/completions", body=..., cast_to=<raw response>)`` plus an orjson parse, which is the path
evald's provider uses. It is what this machine can do with the SDK and nothing else.

The ideal is concurrency / latency (32 / 0.2 s = 160 judged cases/s). Reported: judged cases/s (verdicts, i.e.
``evald_judge_requests_total{outcome="ok"}``) per 10 s interval and over the whole measured window (after a
warm-up), the ratio to the ideal, RSS at start/middle/end of the window, the queue wait p50/p99 (from evald's own
``evald_queue_wait_seconds`` histogram over the measured window, interpolated within buckets as Prometheus'
``histogram_quantile`` does), and every non-ok judge outcome or metric error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import parse_config  # noqa: E402
from evald.judges.prompting import VerdictField, build_prompt, verdict_schema  # noqa: E402
from evald.judges.providers import http_library  # noqa: E402
from evald.judges.registry import close_judges  # noqa: E402
from evald.metrics.rag.answer_relevancy import AnswerRelevancyMetric  # noqa: E402
from evald.model import ScoredCase  # noqa: E402
from evald.service import EvaldService  # noqa: E402
from evald.telemetry import Telemetry  # noqa: E402
from tests.judges.load_traces import replicated_batches  # noqa: E402

#: corpus traces whose trace case has an input and an output (the judged metric applies to every one)
JUDGED_SCENARIOS = ("a_chat_correct", "b_chat_wrong", "d_rag", "e_pii", "h_streaming_chat")

SERVER = textwrap.dedent('''
    import asyncio, sys
    sys.path.insert(0, sys.argv[2])
    from aiohttp import web
    from tests.judges.fake_llm import FakeLLM, Reply

    async def main():
        llm = FakeLLM(default=Reply(delay=float(sys.argv[1])))
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", llm.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        host, port = runner.addresses[0][:2]
        print(f"http://{host}:{port}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
''')

CONFIG = """
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s, num_traces: 20000, late_retention: {late_retention} }}
pipeline: {{ workers: {workers}, queue_size: {queue_size}, metric_timeout: 30s }}
judges:
  default:
    provider: openai
    model: gpt-4o-mini
    api_key: sk-bench-not-a-real-key
    base_url: "{base_url}/v1"
    timeout: 10s
    max_concurrency: {concurrency}
    cache: {{ enabled: false }}
metrics:
  - {{ kind: answer_relevancy, scope: trace }}
telemetry: {{ logs: {{ level: warning }} }}
"""


class CountingExporter:
    """Counts exported scores and forgets them (an in-memory list would grow for the whole run)."""

    id = "count"

    def __init__(self) -> None:
        self.scores = 0
        self.errors = 0

    async def start(self) -> None:
        return None

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        for scored in batch:
            self.scores += len(scored.scores)
            self.errors += len(scored.errors)

    async def shutdown(self, timeout: float) -> None:
        return None


def queue_wait_buckets(telemetry: Telemetry) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) of ``evald_queue_wait_seconds`` now."""
    return [(float(s.labels["le"]), s.value) for m in telemetry.registry.collect()
            if m.name == "evald_queue_wait_seconds" for s in m.samples if s.name.endswith("_bucket")]


def bucket_quantile(q: float, before: list[tuple[float, float]], after: list[tuple[float, float]]) -> float:
    """The q-quantile of the observations between two snapshots, linear within a bucket (``histogram_quantile``)."""
    counts = [(bound, a - b) for (bound, a), (_, b) in zip(after, before, strict=True)]
    total = counts[-1][1] if counts else 0.0
    if total <= 0:
        return float("nan")
    rank, lower, below = q * total, 0.0, 0.0
    for bound, cumulative in counts:
        if cumulative >= rank:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (rank - below) / max(1e-9, cumulative - below)
        lower, below = bound, cumulative
    return lower


async def reference(base_url: str, concurrency: int, seconds: float, path: str) -> tuple[float, float]:
    """The bare SDK: (calls/s, CPU ms per call) with ``concurrency`` calls in flight for ``seconds``; ``path``
    ``create`` (``chat.completions.create``) or ``post`` (the low-level ``client.post`` evald's provider uses)."""
    import openai
    import orjson

    raw_response = http_library(openai).Response  # what makes client.post return the response undecoded

    fields = (VerdictField("score", 1, 5, "relevance"),)
    prompt = build_prompt(AnswerRelevancyMetric.task, [("input", "What is the capital of France? " * 4),
                                                      ("output", "The capital of France is Paris. " * 8)], fields)
    response_format: Any = {"type": "json_schema",
                       "json_schema": {"name": "verdict", "strict": True, "schema": verdict_schema(fields)}}
    messages: Any = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
    client = openai.AsyncOpenAI(api_key="sk-bench-not-a-real-key", base_url=f"{base_url}/v1", timeout=10,
                                max_retries=0)
    body = {"model": "gpt-4o-mini", "max_tokens": 512, "temperature": 0, "response_format": response_format,
            "messages": messages}
    calls = 0
    deadline = 0.0

    async def loop() -> None:
        nonlocal calls
        while time.perf_counter() < deadline:
            if path == "create":
                await client.chat.completions.create(
                    model="gpt-4o-mini", max_tokens=512, temperature=0, response_format=response_format,
                    messages=messages,
                )
            else:
                raw = await client.post("/chat/completions", body=body, cast_to=raw_response)
                orjson.loads(raw.content)["choices"][0]["message"]["content"]
            calls += 1

    deadline = time.perf_counter() + 2.0  # warm up the connections
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    calls, cpu0, t0 = 0, time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await client.close()
    return calls / elapsed, cpu / max(1, calls) * 1000


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def feed(service: EvaldService, rate: float, stop: asyncio.Event) -> None:
    window, on_trace = service.window, service.pipeline.on_trace
    per_batch = 10
    next_id = 1
    started = time.perf_counter()
    while not stop.is_set():
        for batch in replicated_batches(per_batch, per_batch, next_id, JUDGED_SCENARIOS):
            window.consume(batch)
        next_id += per_batch
        await window.flush(on_trace)  # blocks on the bounded queue when workers are behind (backpressure)
        if rate > 0:
            delay = started + (next_id - 1) / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        else:
            await asyncio.sleep(0)


def runqueue_wait_seconds() -> float:
    """Time this process was runnable but waiting for a CPU (other processes had it), from /proc/self/schedstat."""
    return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9


def cpu_seconds(pid: int) -> float:
    """utime + stime of another process (the fake server), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def loop_lag(lags: list[float], stop: asyncio.Event) -> None:
    """How late a 50 ms sleep wakes up: the event loop's (and the machine's) scheduling delay."""
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.05)
        lags.append(time.perf_counter() - started - 0.05)


async def run(args: argparse.Namespace, base_url: str, server_pid: int) -> dict[str, Any]:
    telemetry = Telemetry()
    config = parse_config(CONFIG.format(base_url=base_url, concurrency=args.concurrency, workers=args.workers,
                                        queue_size=args.queue_size, late_retention=args.late_retention))
    exporter = CountingExporter()
    service = EvaldService(config, telemetry, with_receivers=False, with_admin=False, configured_exporters=False,
                           extra_exporters=[exporter])
    pipeline = service.pipeline
    sample = telemetry.registry.get_sample_value

    def verdicts() -> float:
        return sample("evald_judge_requests_total", {"judge": "default", "outcome": "ok"}) or 0.0

    def durations() -> tuple[float, float]:
        labels = {"judge": "default"}
        return (sample("evald_judge_request_duration_seconds_sum", labels) or 0.0,
                sample("evald_judge_request_duration_seconds_count", labels) or 0.0)

    await pipeline.start()
    stop = asyncio.Event()
    feeder = asyncio.create_task(feed(service, args.rate, stop))
    lags: list[float] = []
    lagger = asyncio.create_task(loop_lag(lags, stop))
    tune_gc()  # as `evald run` does after startup
    await asyncio.sleep(args.warmup)
    waits0 = queue_wait_buckets(telemetry)
    lags.clear()
    t0, v0, cpu0, server0 = time.perf_counter(), verdicts(), time.process_time(), cpu_seconds(server_pid)
    load0, waited0 = os.getloadavg()[0], runqueue_wait_seconds()
    d0 = durations()
    rss = [rss_mb()]
    intervals: list[float] = []
    last_t, last_v = t0, v0
    while time.perf_counter() - t0 < args.duration:
        await asyncio.sleep(min(10.0, args.duration - (time.perf_counter() - t0)))
        now, v = time.perf_counter(), verdicts()
        intervals.append((v - last_v) / (now - last_t))
        print(f"  t={now - t0:6.1f}s  judged/s {intervals[-1]:7.1f}  queue {pipeline.queue_depth:5d}  "
              f"RSS {rss_mb():6.1f} MB", flush=True)
        last_t, last_v = now, v
        if len(rss) == 1 and now - t0 >= args.duration / 2:
            rss.append(rss_mb())
    elapsed, total, cpu = time.perf_counter() - t0, verdicts() - v0, time.process_time() - cpu0
    server_cpu, load1 = cpu_seconds(server_pid) - server0, os.getloadavg()[0]
    starved = runqueue_wait_seconds() - waited0
    d1 = durations()
    rss.append(rss_mb())
    waits1 = queue_wait_buckets(telemetry)
    stop.set()
    feeder.cancel()
    await asyncio.gather(feeder, lagger, return_exceptions=True)
    await pipeline.drain(timeout=120)  # let the calls in flight finish before the clients close
    await pipeline.shutdown(timeout=5)
    await close_judges()
    outcomes = {s.labels["outcome"]: s.value for m in telemetry.registry.collect()
                if m.name == "evald_judge_requests" for s in m.samples if s.name.endswith("_total")}
    errors = {s.labels["reason"]: s.value for m in telemetry.registry.collect()
              if m.name == "evald_metric_errors" for s in m.samples if s.name.endswith("_total")}
    waits = (bucket_quantile(0.5, waits0, waits1), bucket_quantile(0.99, waits0, waits1))
    return {"rate": total / elapsed, "intervals": intervals, "rss": rss, "waits": waits,
            "outcomes": outcomes, "errors": errors, "elapsed": elapsed, "cpu": cpu, "verdicts": total,
            "call_seconds": (d1[0] - d0[0]) / max(1.0, d1[1] - d0[1]), "lags": lags, "server_cpu": server_cpu,
            "load": (load0, load1), "starved": starved}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=120.0, help="measured seconds (after the warm-up)")
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--latency", type=float, default=0.2, help="server answer delay in seconds")
    parser.add_argument("--concurrency", type=int, default=32, help="judge max_concurrency")
    parser.add_argument("--workers", type=int, default=4, help="pipeline.workers")
    parser.add_argument("--queue-size", type=int, default=512, help="pipeline.queue_size")
    parser.add_argument("--rate", type=float, default=0.0, help="traces offered per second; 0 = saturate")
    parser.add_argument("--reference-seconds", type=float, default=30.0,
                        help="bare-SDK reference before and after evald, seconds each; 0 = none")
    parser.add_argument("--late-retention", type=int, default=5000,
                        help="assembly.late_retention (released traces kept for late spans: RSS grows until "
                        "that many traces were released)")
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.latency), str(ROOT)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise RuntimeError("the fake LLM server did not start")
        ideal = args.concurrency / args.latency
        print(f"judge max_concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms: ideal "
              f"{ideal:.0f} judged cases/s; workers {args.workers}, queue {args.queue_size}, "
              f"rate {'saturate' if args.rate <= 0 else args.rate}; cpus={os.cpu_count()}", flush=True)
        paths = ("create", "post") if args.reference_seconds > 0 else ()
        refs = {path: [asyncio.run(reference(base_url, args.concurrency, args.reference_seconds, path))]
                for path in paths}
        result = asyncio.run(run(args, base_url, server.pid))
        for path in paths:
            refs[path].append(asyncio.run(reference(base_url, args.concurrency, args.reference_seconds, path)))
    finally:
        server.terminate()
        server.wait(10)
    rss = result["rss"]
    print()
    print("| | value |")
    print("| --- | ---: |")
    print(f"| judged cases/s over {result['elapsed']:.0f} s | {result['rate']:.1f} |")
    print(f"| median of 10 s intervals (min–max) | {statistics.median(result['intervals']):.1f} "
          f"({min(result['intervals']):.1f}–{max(result['intervals']):.1f}) |")
    print(f"| ratio to the ideal {ideal:.0f}/s | **{result['rate'] / ideal:.3f}** |")
    print(f"| RSS start / middle / end | {rss[0]:.0f} / {rss[1 if len(rss) > 2 else 0]:.0f} / {rss[-1]:.0f} MB |")
    print(f"| queue wait p50 / p99 (evald_queue_wait_seconds) | {result['waits'][0] * 1000:.0f} / "
          f"{result['waits'][1] * 1000:.0f} ms |")
    for path, label in (("create", "`chat.completions.create`"), ("post", "low-level `client.post` (evald's path)")):
        if path in refs:
            (rate0, cpu0), (rate1, cpu1) = refs[path]
            print(f"| bare openai SDK, {label}, before / after | {rate0:.1f} / {rate1:.1f} calls/s, "
                  f"{cpu0:.2f} / {cpu1:.2f} ms CPU per call |")
            print(f"| ratio evald / that reference (mean of before and after) | "
                  f"**{result['rate'] / statistics.mean((rate0, rate1)):.3f}** |")
    call = result["call_seconds"]
    print(f"| mean judge call (SDK call, server latency included) | {call * 1000:.0f} ms |")
    print(f"| mean calls in flight (rate × mean call, Little's law) | {result['rate'] * call:.1f} |")
    print(f"| evald CPU per judged case (process CPU / verdicts) | {result['cpu'] / result['verdicts'] * 1000:.2f} ms "
          f"({result['cpu'] / result['elapsed']:.0%} of one core) |")
    print(f"| fake server CPU | {result['server_cpu'] / result['elapsed']:.0%} of one core |")
    print(f"| event-loop lag p50 / p99 (a 50 ms sleep waking late) | {percentile(result['lags'], 0.5) * 1000:.0f} / "
          f"{percentile(result['lags'], 0.99) * 1000:.0f} ms |")
    print(f"| machine load average (1 min) start / end | {result['load'][0]:.1f} / {result['load'][1]:.1f} |")
    starved = result["starved"] / result["elapsed"]
    print(f"| evald waiting for a CPU (runnable, not running) | {starved:.0%} of the time |")
    print(f"| judge outcomes | {result['outcomes']} |")
    print(f"| metric errors | {result['errors'] or 'none'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
