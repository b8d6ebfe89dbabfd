"""evald's CPU per trace after mapping: on_trace's own work, the workers' scoring and the Prometheus table.

    python tests/benchmarks/bench_after_mapping.py [--spans 4000] [--passes 5] [--rounds 3]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python tests/benchmarks/bench_after_mapping.py \\
        --passes 1 --rounds 1       # and again with --passes 6: the difference is 5 passes over the traces

The full mix of conventions (full_mix.py, log companions first) goes once through the receiver's Ingestor into an
assembly window whose sink only keeps the released traces; each is mapped once by the service's router. Then each
round starts a fresh ``EvaldService`` (bench_e2e.py's config, ``decision_wait: 1s`` as for the full mix; no
receivers, no admin server) whose pipeline is given a router that returns the stored mapping of each trace, and
feeds every trace ``--passes`` times to ``pipeline.on_trace`` (the window's hand-over), then drains the workers.
What is measured is therefore everything the pipeline does per trace and per case once mapping is done: content
diagnosis, reference resolution, plans, the case queue, the workers, the metrics, the Prometheus score table.
Nothing waits on a timer, so under callgrind the instruction count depends on the code only. Reported: µs of CPU
per trace (``time.process_time``), median of rounds, with the GC tuned as ``evald run`` tunes it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_e2e import EVALD_CONFIG  # noqa: E402

from evald.assembly.completion import Completion  # noqa: E402
from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import ResolvedConfig, parse_config  # noqa: E402
from evald.interfaces import MappingResult  # noqa: E402
from evald.model import AssembledTrace  # noqa: E402
from evald.receivers.ingest import Ingestor  # noqa: E402
from evald.service import EvaldService  # noqa: E402
from tests.benchmarks import full_mix  # noqa: E402

Mapped = list[tuple[AssembledTrace, MappingResult]]


def config() -> ResolvedConfig:
    return parse_config(EVALD_CONFIG.format(grpc=0, metrics=0).replace("decision_wait: 10s", "decision_wait: 1s"))


async def capture(payloads: list[bytes], logs: list[bytes]) -> Mapped:
    """The traces the window releases for the mix, each with its mapping (computed once, here)."""
    service = EvaldService(config(), with_receivers=False, with_admin=False)
    traces: list[AssembledTrace] = []

    async def keep(trace: AssembledTrace, completion: Completion) -> None:
        traces.append(trace)
        completion.release()

    await service.window.start(keep)
    ingestor = Ingestor("otlp", "grpc", service.window, service.telemetry)
    for payload, log in zip(payloads, logs, strict=True):
        if log:
            await ingestor.ingest_body(log, "protobuf", "logs")
        await ingestor.ingest_body(payload, "protobuf", "traces")
    await service.window.flush(keep)
    await service.window.shutdown(None, 1.0)
    return [(trace, service.router.map(trace)) for trace in traces]


class StoredRouter:
    """Answers ``map`` with the mapping computed in ``capture`` (by the trace object's identity)."""

    def __init__(self, mapped: Mapped) -> None:
        self._results = {id(trace): result for trace, result in mapped}

    def map(self, trace: AssembledTrace) -> MappingResult:
        return self._results[id(trace)]


async def one_round(mapped: Mapped, passes: int) -> float:
    """µs of CPU per trace of ``passes`` passes over ``mapped`` (service start and shutdown excluded)."""
    service = EvaldService(config(), with_receivers=False, with_admin=False)
    service.pipeline._router = StoredRouter(mapped)  # type: ignore[assignment]  # mapping is not measured here
    await service.pipeline.start()
    tune_gc()  # as `evald run` does after start
    on_trace = service.pipeline.on_trace
    started = time.process_time()
    for _ in range(passes):
        for trace, _result in mapped:
            await on_trace(trace, Completion([]))
        await asyncio.sleep(0)  # let the workers take what was queued
    if not await service.pipeline.drain(600):
        raise RuntimeError("the workers did not drain within 600 s")
    cpu = time.process_time() - started
    await service.pipeline.shutdown(5.0)
    return cpu / (passes * len(mapped)) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=4_000)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    payloads, logs, spans, _ = full_mix.build_requests(args.spans)
    mapped = asyncio.run(capture(payloads, logs))
    cases = sum(len(result.cases) for _, result in mapped)
    print(f"full mix: {spans} spans, {len(mapped)} traces, {cases} cases; {args.passes} passes per round", flush=True)
    per_trace = []
    for round_no in range(1, args.rounds + 1):
        per_trace.append(asyncio.run(one_round(mapped, args.passes)))
        print(f"round {round_no}: {per_trace[-1]:.1f} µs of CPU per trace", flush=True)
    print(f"median {statistics.median(per_trace):.1f} µs of CPU per trace after mapping")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
