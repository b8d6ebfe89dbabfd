"""What a refused request costs the receiver while the window is full, with and without refusal before decoding.

    python tests/benchmarks/bench_refusal.py [--requests 6000] [--rate 2000]

A consumer that always refuses (QueueFullError, as the full assembly window does) behind the real ``Ingestor``; the
corpus requests (protobuf and OTLP/JSON) are offered in turn at ``--rate`` requests/s (senders retrying against a
full window). ``hold 0`` is the old order (decode, then be refused); ``hold 0.1 s`` is the current one (after a
refusal, refuse before decoding for REFUSAL_HOLD). Reports microseconds of CPU per refused request (measured around
the ingest calls only) and how many requests were decoded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evald.errors import QueueFullError  # noqa: E402
from evald.model import ConsumeResult, SignalBatch  # noqa: E402
from evald.receivers import ingest  # noqa: E402
from evald.receivers.ingest import Encoding, Ingestor  # noqa: E402
from evald.telemetry import Telemetry  # noqa: E402
from tests.receivers.fuzz_inputs import Corpus  # noqa: E402


class FullWindow:
    def __init__(self) -> None:
        self.decoded = 0

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.decoded += 1
        raise QueueFullError("assembly window is full (1000 of 1000 traces)", retry_after=1.0)


async def run(bodies: list[bytes], encoding: Encoding, n: int, rate: float, hold: float) -> tuple[float, int]:
    ingest.REFUSAL_HOLD = hold
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6_000)
    parser.add_argument("--rate", type=float, default=2_000.0)
    args = parser.parse_args()
    corpus = Corpus()
    for encoding, bodies in (("protobuf", corpus.pb["traces"]), ("json", corpus.json["traces"])):
        for hold in (0.0, 0.1):
            micros, decoded = asyncio.run(run(bodies, encoding, args.requests, args.rate, hold))  # type: ignore[arg-type]
            print(f"{encoding:8} hold {hold:.1f} s: {micros:7.1f} us CPU per refused request, "
                  f"{decoded} of {args.requests} decoded")


if __name__ == "__main__":
    main()
