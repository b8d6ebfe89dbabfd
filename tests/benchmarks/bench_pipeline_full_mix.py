"""evald's in-process pipeline on the full mix of conventions (traces and their log companions), for callgrind.

    python tests/benchmarks/bench_pipeline_full_mix.py --write /tmp/full_3000.pkl 3000   # build the payloads once
    python tests/benchmarks/bench_pipeline_full_mix.py --write /tmp/full_9000.pkl 9000
    PY=$(python3 -c 'import sys; print(sys.executable)'); export PYTHONHASHSEED=0
    CG="valgrind --tool=callgrind --callgrind-out-file=/dev/null"
    $CG $PY tests/benchmarks/bench_pipeline_full_mix.py /tmp/full_3000.pkl
    $CG $PY tests/benchmarks/bench_pipeline_full_mix.py /tmp/full_9000.pkl

The difference of the two "Collected" counts over 6,000 spans is evald's instructions per span: every request
(log companion first, as bench_e2e.py sends them) goes through the receivers' ``Ingestor`` (decode, window), then
the window is flushed (with retention, as a release in ``evald run``) and the pipeline drained (mapping, goldens,
scoring, the Prometheus table), with bench_e2e.py's config and the garbage collector tuned as ``evald run`` tunes
it. The payloads are built by ``--write`` beforehand, so protobuf building is not counted; nothing polls, so the
count depends on the code, not on the host's load. Run it from the checkout to measure (``cd <checkout>``).
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_e2e import EVALD_CONFIG, build_full_mix  # noqa: E402

from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import parse_config  # noqa: E402
from evald.receivers.ingest import Ingestor  # noqa: E402
from evald.service import EvaldService  # noqa: E402


async def run(payloads: list[bytes], logs: list[bytes]) -> None:
    service = EvaldService(parse_config(EVALD_CONFIG.format(grpc=0, metrics=0)), with_receivers=False,
                           with_admin=False)
    await service.start()
    tune_gc()
    ingestor = Ingestor("otlp", "grpc", service.window, service.telemetry)
    for payload, companion in zip(payloads, logs, strict=True):
        if companion:
            await ingestor.ingest_body(companion, "protobuf", "logs")
        await ingestor.ingest_body(payload, "protobuf", "traces")
    await service.window.flush(service.pipeline.on_trace)
    await service.pipeline.drain(timeout=600)
    await service.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("spans", type=int, nargs="?", help="with --write: how many spans of the full mix")
    parser.add_argument("--write", action="store_true", help="build the payloads and write them to FILE")
    args = parser.parse_args()
    if args.write:
        payloads, logs, spans, traces = build_full_mix(args.spans or 3000)
        args.file.write_bytes(pickle.dumps((payloads, logs, spans, traces)))
        print(f"{spans} spans in {traces} traces, {len(payloads)} requests -> {args.file}")
        return 0
    payloads, logs, spans, traces = pickle.loads(args.file.read_bytes())  # noqa: S301 - our own file
    asyncio.run(run(payloads, logs))
    print(f"{spans} spans in {traces} traces", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
