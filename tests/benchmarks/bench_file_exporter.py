"""The file exporter at evald's full rate: bench_e2e.py's traces through the pipeline in process, plus a file exporter.

    python tests/benchmarks/bench_file_exporter.py [--spans 30000] [--queue-size 10000] [--no-block]

Reports cases/s from the first request to the last line written, and the file exporter's drops by reason. With
``--no-block`` a full buffer drops (the old behaviour); by default it makes the pipeline wait.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_e2e import EVALD_CONFIG, build_requests  # noqa: E402

from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import parse_config  # noqa: E402
from evald.receivers.ingest import Ingestor  # noqa: E402
from evald.service import EvaldService  # noqa: E402


async def run(payloads: list[bytes], queue_size: int, block: bool, path: Path) -> tuple[float, int, dict[str, float]]:
    body = EVALD_CONFIG.format(grpc=0, metrics=0).replace(
        "exporters:\n", f"exporters:\n  file: {{ path: '{path}', queue_size: {queue_size}, "
        f"block_on_overflow: {str(block).lower()} }}\n")
    service = EvaldService(parse_config(body), with_receivers=False, with_admin=False)
    await service.start()
    tune_gc()
    ingestor = Ingestor("otlp", "grpc", service.window, service.telemetry)
    started = time.perf_counter()
    pending: set[asyncio.Future[tuple[int, str]]] = set()
    for payload in payloads:
        pending.add(asyncio.ensure_future(ingestor.ingest_body(payload, "protobuf", "traces")))
        if len(pending) >= 4:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.gather(*pending)
    await service.shutdown()
    elapsed = time.perf_counter() - started
    reg = service.telemetry.registry
    drops = {r: reg.get_sample_value("evald_exporter_dropped_scores_total", {"exporter": "file", "reason": r}) or 0
             for r in ("queue_full", "shutdown")}
    written = sum(1 for _ in path.open("rb"))
    return written / elapsed, written, drops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=30_000)
    parser.add_argument("--queue-size", type=int, default=10_000)
    parser.add_argument("--no-block", action="store_true")
    args = parser.parse_args()
    payloads, spans, traces = build_requests(args.spans)
    with tempfile.TemporaryDirectory() as tmp:
        rate, written, drops = asyncio.run(run(payloads, args.queue_size, not args.no_block, Path(tmp) / "s.jsonl"))
    print(f"{spans} spans, {traces} traces: {written} lines, {rate:,.0f} cases/s, dropped scores {drops}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
