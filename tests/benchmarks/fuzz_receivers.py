"""Fuzz both receivers of a running ``evald run`` with malformed and mutated OTLP (outside the suite; a bounded
sample runs in it: tests/receivers/test_fuzz_sample.py).

    python tests/benchmarks/fuzz_receivers.py [--inputs 100000] [--seed 1] [--concurrency 32] [--rss-limit-mb 700]

Inputs come from tests/receivers/fuzz_inputs.py (protobuf byte and structure mutations of the corpus, OTLP/JSON text
and value mutations, random bytes, odd content types/encodings/paths/methods, oversize bodies and gzip bombs), sent
over OTLP/HTTP (aiohttp client) and OTLP/gRPC (grpc.aio, raw bytes). Checked: the daemon never exits, every request
gets an answer, no answer is a 500 or INTERNAL/UNKNOWN, the daemon's RSS (sampled every 0.5 s) stays under
``--rss-limit-mb``, /healthz answers at the end and SIGTERM exits 0 with no traceback in the log. Prints the inputs by
kind, the answers by transport and status, peak RSS and duration, and exits 1 if a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import grpc
import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.integration.daemon import Daemon  # noqa: E402
from tests.receivers.fuzz_inputs import (  # noqa: E402
    GRPC_OK_CODES,
    HTTP_OK_STATUSES,
    Corpus,
    FuzzInput,
    generate,
    send_grpc,
    send_http,
)

CONFIG = """
assembly: { settle: 200ms, decision_wait: 2s }
metrics:
  - { kind: error_free, scope: all }
pipeline: { workers: 2, shutdown_timeout: 10s }
"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def fuzz(daemon: Daemon, inputs: int, seed: int, concurrency: int) -> dict[str, object]:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    rng = random.Random(seed)
    corpus = Corpus()
    kinds: collections.Counter[str] = collections.Counter()
    answers: collections.Counter[tuple[str, str]] = collections.Counter()
    bad: list[tuple[str, str, str]] = []
    rss: list[float] = []
    crashed = False
    queue: asyncio.Queue[FuzzInput | None] = asyncio.Queue(maxsize=concurrency * 4)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session, \
            grpc.aio.insecure_channel(f"127.0.0.1:{daemon.grpc_port}",
                                      options=[("grpc.max_send_message_length", 64 << 20)]) as channel:

        async def worker() -> None:
            while (item := await queue.get()) is not None:
                if item.transport == "grpc":
                    answer = await send_grpc(channel, item)
                    ok = answer in GRPC_OK_CODES
                else:
                    answer = await send_http(session, f"http://127.0.0.1:{daemon.http_port}", item)
                    ok = answer.isdigit() and int(answer) in HTTP_OK_STATUSES
                answers[(item.transport, answer)] += 1
                if not ok and len(bad) < 50:
                    bad.append((item.kind, answer, repr(item.body[:120])))

        async def monitor() -> None:
            nonlocal crashed
            while True:
                if daemon.proc is None or daemon.proc.poll() is not None:
                    crashed = True
                    return
                rss.append(rss_mb(pid))
                await asyncio.sleep(0.5)

        workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
        watcher = asyncio.create_task(monitor())
        started = time.monotonic()
        for i in range(inputs):
            item = generate(rng, corpus)
            kinds[item.kind] += 1
            await queue.put(item)
            if i % 10_000 == 0 and i:
                sent = sum(answers.values())
                print(f"  {i} generated, {sent} answered, {time.monotonic() - started:.0f}s, "
                      f"RSS {rss[-1] if rss else 0:.0f} MB", flush=True)
            if crashed:
                break
        for _ in workers:
            await queue.put(None)
        await asyncio.gather(*workers)
        duration = time.monotonic() - started
        watcher.cancel()
    return {"kinds": kinds, "answers": answers, "bad": bad, "rss": rss, "crashed": crashed, "duration": duration}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rss-limit-mb", type=float, default=700.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        daemon = Daemon(Path(tmp), CONFIG).start()
        try:
            result = asyncio.run(fuzz(daemon, args.inputs, args.seed, args.concurrency))
            healthz = httpx.get(f"{daemon.metrics_url}/healthz", timeout=5).status_code
            exit_code = daemon.stop(30)
        finally:
            daemon.stop()
        log = daemon.log()
    answers: collections.Counter[tuple[str, str]] = result["answers"]  # type: ignore[assignment]
    rss: list[float] = result["rss"]  # type: ignore[assignment]
    total = sum(answers.values())
    print(f"inputs tried: {sum(result['kinds'].values())} in {result['duration']:.1f}s "  # type: ignore[attr-defined]
          f"({total / result['duration']:.0f}/s)")  # type: ignore[operator]
    print("inputs by kind:", dict(sorted(result["kinds"].items())))  # type: ignore[attr-defined]
    for transport in ("http", "grpc"):
        by_status = {status: n for (t, status), n in sorted(answers.items()) if t == transport}
        print(f"answers over {transport}: {by_status}")
    print(f"RSS: start {rss[0]:.0f} MB, peak {max(rss):.0f} MB, end {rss[-1]:.0f} MB ({len(rss)} samples)")
    print(f"/healthz at the end: {healthz}; exit code after SIGTERM: {exit_code}; log lines: {len(log.splitlines())}")
    failures = []
    if result["crashed"]:
        failures.append("the daemon exited during the run")
    if result["bad"]:
        failures.append(f"unexpected answers (first ones): {result['bad'][:10]}")
    if total != sum(result["kinds"].values()):  # type: ignore[attr-defined]
        failures.append(f"{total} answers for {sum(result['kinds'].values())} inputs")  # type: ignore[attr-defined]
    if max(rss) > args.rss_limit_mb:
        failures.append(f"peak RSS {max(rss):.0f} MB over {args.rss_limit_mb:.0f} MB")
    if healthz != 200 or exit_code != 0:
        failures.append(f"/healthz {healthz}, exit code {exit_code}")
    if "Traceback" in log:
        failures.append("a traceback in the log:\n" + log[log.index("Traceback"):][:3000])
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
