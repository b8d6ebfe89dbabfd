"""evald's own CPU per span, without gRPC: the payloads of bench_e2e.py fed to the receiver's Ingestor in process.

    python tests/benchmarks/bench_pipeline_cpu.py [--spans 30000] [--rounds 3]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python tests/benchmarks/bench_pipeline_cpu.py \\
        --spans 2000 --rounds 1        # and again with --spans 6000: the difference is instructions per span

The service is ``EvaldService`` with bench_e2e.py's config (no admin server, no listening receivers); the
requests go through ``Ingestor.ingest_body`` (decode, window, mapping, scoring, Prometheus table), four in flight
as the e2e client does, with the garbage collector tuned as ``evald run`` tunes it. The clock stops when an extra
exporter has seen every trace case scored; nothing polls, so under callgrind the instruction count depends on the
code, not on the host's load (wall-clock and CPU-time comparisons on this machine move by ±15% between runs).
Reported: spans per CPU second, median of rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_e2e import EVALD_CONFIG, build_requests  # noqa: E402

from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import parse_config  # noqa: E402
from evald.model import ScoredCase  # noqa: E402
from evald.receivers.ingest import Ingestor  # noqa: E402
from evald.service import EvaldService  # noqa: E402


class _TraceCounter:
    """Exporter that sets ``done`` once ``expected`` trace cases were exported."""

    id = "bench_counter"

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.seen = 0
        self.done = asyncio.Event()

    async def start(self) -> None:
        return None

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        self.seen += sum(1 for scored in batch if scored.case.scope == "trace")
        if self.seen >= self.expected:
            self.done.set()

    async def shutdown(self, timeout: float) -> None:
        return None


async def one_round(payloads: list[bytes], spans: int, traces: int) -> float:
    """Spans per CPU second of one run (service start and shutdown excluded)."""
    config = parse_config(EVALD_CONFIG.format(grpc=0, metrics=0))
    counter = _TraceCounter(traces)
    service = EvaldService(config, with_receivers=False, with_admin=False, extra_exporters=[counter])
    await service.start()
    tune_gc()  # as `evald run` does after start
    ingestor = Ingestor("otlp", "grpc", service.window, service.telemetry)
    started = time.process_time()
    pending: set[asyncio.Future[tuple[int, str]]] = set()
    for payload in payloads:
        pending.add(asyncio.ensure_future(ingestor.ingest_body(payload, "protobuf", "traces")))
        if len(pending) >= 4:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.gather(*pending)
    await asyncio.wait_for(counter.done.wait(), 600)
    cpu = time.process_time() - started
    await service.shutdown()
    return spans / cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    payloads, spans, traces = build_requests(args.spans)
    rates = []
    for round_no in range(1, args.rounds + 1):
        rates.append(asyncio.run(one_round(payloads, spans, traces)))
        print(f"round {round_no}: {rates[-1]:,.0f} spans per CPU second", flush=True)
    print(f"{spans} spans in {traces} traces: median {statistics.median(rates):,.0f} spans per CPU second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
