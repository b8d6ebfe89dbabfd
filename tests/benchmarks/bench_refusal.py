"""What a refused request costs the receiver while the window is full, with and without refusal before decoding.

    python tests/benchmarks/bench_refusal.py [--requests 6000] [--rate 2000] [--overload-seconds 8]

A consumer that always refuses (QueueFullError, as the full assembly window does) behind the real ``Ingestor``; the
corpus requests (protobuf and OTLP/JSON) are offered in turn at ``--rate`` requests/s (senders retrying against a
full window). ``hold 0`` is the old order (decode, then be refused); ``hold 0.1 s`` is the current one (after a
refusal, refuse before decoding for REFUSAL_HOLD). Reports microseconds of CPU per refused request (measured around
the ingest calls only) and how many requests were decoded.

Then the effect on scoring: an in-process ``EvaldService`` (bench_e2e's metrics and corpus traces, a window of
300 traces) flooded by 32 senders that retry every 20 ms when refused, for ``--overload-seconds``; reported are the
trace cases scored per second and per CPU-second (the steadier figure on a shared machine) and how many requests
were accepted, refused and decoded, with each hold.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evald.errors import QueueFullError  # noqa: E402
from evald.model import ConsumeResult, SignalBatch  # noqa: E402
from evald.receivers import refusal_hold  # noqa: E402
from evald.receivers.ingest import Encoding, Ingestor  # noqa: E402
from evald.telemetry import Telemetry  # noqa: E402
from tests.receivers.fuzz_inputs import Corpus  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
from bench_e2e import EVALD_CONFIG, build_requests  # noqa: E402

from evald.config.loader import parse_config  # noqa: E402
from evald.service import EvaldService  # noqa: E402


class FullWindow:
    def __init__(self) -> None:
        self.decoded = 0

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.decoded += 1
        raise QueueFullError("assembly window is full (1000 of 1000 traces)", retry_after=1.0)


async def run(bodies: list[bytes], encoding: Encoding, n: int, rate: float, hold: float) -> tuple[float, int]:
    refusal_hold.REFUSAL_HOLD = hold
    window = FullWindow()
    ingestor = Ingestor("otlp", "http", window, Telemetry())
    cpu = 0.0
    started = time.monotonic()
    for i in range(n):
        due = started + i / rate
        if (ahead := due - time.monotonic()) > 0:
            await asyncio.sleep(ahead)
        before = time.process_time()
        with contextlib.suppress(QueueFullError):
            await ingestor.ingest_body(bodies[i % len(bodies)], encoding, "traces")
        cpu += time.process_time() - before
    return cpu / n * 1e6, window.decoded


class CountingWindow:
    """The service's window, counting the batches it was offered (each one was decoded)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.offered = 0

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.offered += 1
        result: ConsumeResult = self.window.consume(batch)
        return result


async def overload(payloads: list[bytes], seconds: float, hold: float) -> dict[str, float]:
    refusal_hold.REFUSAL_HOLD = hold
    config = EVALD_CONFIG.format(grpc=0, metrics=0).replace("num_traces: 100000", "num_traces: 300")
    service = EvaldService(parse_config(config), with_receivers=False, with_admin=False)
    await service.start()
    window = CountingWindow(service.window)
    ingestor = Ingestor("otlp", "grpc", window, service.telemetry)
    counts = {"accepted": 0, "refused": 0}
    stop = time.monotonic() + seconds

    async def sender(start: int) -> None:
        i = start
        while time.monotonic() < stop:
            try:
                await ingestor.ingest_body(payloads[i % len(payloads)], "protobuf", "traces")
                counts["accepted"] += 1
                i += 32
            except QueueFullError:
                counts["refused"] += 1
                await asyncio.sleep(0.02)

    registry = service.telemetry.registry
    scored_before = registry.get_sample_value("evald_scored_cases_total", {"scope": "trace"}) or 0.0
    started, cpu = time.monotonic(), time.process_time()
    await asyncio.gather(*(sender(k) for k in range(32)))
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    scored = (registry.get_sample_value("evald_scored_cases_total", {"scope": "trace"}) or 0.0) - scored_before
    await service.shutdown()
    return {"cases_per_s": scored / elapsed, "cases_per_cpu_s": scored / cpu, "decoded": window.offered, **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6_000)
    parser.add_argument("--rate", type=float, default=2_000.0)
    parser.add_argument("--overload-seconds", type=float, default=8.0)
    args = parser.parse_args()
    corpus = Corpus()
    for encoding, bodies in (("protobuf", corpus.pb["traces"]), ("json", corpus.json["traces"])):
        for hold in (0.0, 0.1):
            micros, decoded = asyncio.run(run(bodies, encoding, args.requests, args.rate, hold))  # type: ignore[arg-type]
            print(f"{encoding:8} hold {hold:.1f} s: {micros:7.1f} us CPU per refused request, "
                  f"{decoded} of {args.requests} decoded")
    payloads = build_requests(200_000, traces_per_request=20)[0]
    for hold in (0.0, 0.1):
        result = asyncio.run(overload(payloads, args.overload_seconds, hold))
        print(f"overload, hold {hold:.1f} s: {result['cases_per_s']:.0f} trace cases/s scored "
              f"({result['cases_per_cpu_s']:.0f} per CPU-second); requests accepted {result['accepted']:.0f}, "
              f"refused {result['refused']:.0f}, decoded {result['decoded']:.0f}")


if __name__ == "__main__":
    main()
