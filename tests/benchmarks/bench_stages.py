"""Per-stage throughput inside one process: decode, mapping per convention, scoring per metric family.

    python tests/benchmarks/bench_stages.py [--spans 20000] [--rounds 5]

Complements bench_e2e.py (which measures the daemon end to end against a reference server): this one says where
the time goes. Every corpus configuration in tests/testdata/corpus is replicated with fresh trace/span ids to about
``--spans`` spans, converted once (the receivers' converter), grouped into assembled traces and then timed:

* decode: protobuf bytes -> SpanRecords (the receivers' ``decode_traces``), per span (log companions, where a
  configuration has them, are decoded once, untimed, and joined to their traces);
* map: the default mapper router on every trace, per span, reported per corpus configuration (convention);
* score: every registered deterministic metric that needs no options (plus those given sample options below) on
  every mapped case, reported as cases per second through all of them, and per family.

Times are process CPU time (``time.process_time``), median of ``--rounds``; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evald.case import EvalCase
from evald.mapping.router import MapperRouter, default_mappers
from evald.metrics.base import BaseMetric
from evald.metrics.registry import BUILTIN_METRICS, get_metric_class
from evald.model import AssembledTrace, LogRecord, SpanRecord
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.receivers.ingest import decode_logs, decode_traces
from evald.telemetry import Telemetry

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "testdata" / "corpus"
SAMPLE_OPTIONS: dict[str, dict[str, Any]] = {
    "regex": {"pattern": "Paris"},
    "contains": {"values": ["Paris"]},
    "latency": {"max_ms": 30000},
    "token_usage": {"max_tokens": 8000},
}


def replicate(directory: Path, total_spans: int) -> tuple[list[bytes], list[bytes]]:
    """The directory's trace files (and ``.logs.pb`` companions) replicated with fresh trace ids into requests of
    100 traces: (trace requests, log requests)."""
    templates = []
    for path in sorted(directory.glob("*.pb")):
        if path.name.endswith(".logs.pb"):
            continue
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(path.read_bytes())
        logs = logs_service_pb2.ExportLogsServiceRequest()
        companion = path.with_name(path.name.removesuffix(".pb") + ".logs.pb")
        if companion.exists():
            logs.ParseFromString(companion.read_bytes())
        templates.append((request, logs))
    trace_payloads: list[bytes] = []
    log_payloads: list[bytes] = []
    spans = counter = 0
    while spans < total_spans and templates:
        request = trace_service_pb2.ExportTraceServiceRequest()
        logs = logs_service_pb2.ExportLogsServiceRequest()
        for _ in range(100):
            counter += 1
            trace_template, logs_template = templates[counter % len(templates)]
            for rs in trace_template.resource_spans:
                copy = request.resource_spans.add()
                copy.CopyFrom(rs)
                for ss in copy.scope_spans:
                    for span in ss.spans:
                        span.trace_id = counter.to_bytes(16, "big")
                        spans += 1
            for rl in logs_template.resource_logs:
                copy_logs = logs.resource_logs.add()
                copy_logs.CopyFrom(rl)
                for sl in copy_logs.scope_logs:
                    for record in sl.log_records:
                        record.trace_id = counter.to_bytes(16, "big")
        trace_payloads.append(request.SerializeToString())
        log_payloads.append(logs.SerializeToString())
    return trace_payloads, log_payloads


def timed(fn: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def decode_all(payloads: list[bytes]) -> list[SpanRecord]:
    return [record for p in payloads for record in decode_traces(p, "protobuf").records]


def assemble(records: list[SpanRecord], log_payloads: list[bytes]) -> list[AssembledTrace]:
    by_trace: dict[str, list[SpanRecord]] = {}
    for record in records:
        by_trace.setdefault(record.trace_id, []).append(record)
    logs: dict[str, list[LogRecord]] = {}
    for payload in log_payloads:
        for log in decode_logs(payload, "protobuf").records:
            logs.setdefault(log.trace_id, []).append(log)
    return [AssembledTrace(tid, tuple(spans), tuple(logs.get(tid, ()))) for tid, spans in by_trace.items()]


def metrics_by_family() -> dict[str, list[BaseMetric]]:
    families: dict[str, list[BaseMetric]] = {}
    for kind in sorted(BUILTIN_METRICS):
        cls = get_metric_class(kind)
        if cls.is_async:
            continue
        try:
            metric = cls(options=SAMPLE_OPTIONS.get(kind, {}))
        except Exception:  # needs options this benchmark does not know: left out, and said so
            print(f"  (skipping {kind}: needs options)", file=sys.stderr)
            continue
        families.setdefault(cls.family, []).append(metric)
    return families


def score_all(cases: list[EvalCase], metrics: list[BaseMetric]) -> None:
    scorer = CaseScorer(Telemetry(), 30.0)
    bindings = [MetricBinding(m, "all", MetricFilter()) for m in metrics]

    async def run() -> None:
        for case in cases:
            await scorer.score(case, bindings)

    asyncio.run(run())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    router = MapperRouter(default_mappers())
    all_cases: list[EvalCase] = []
    print("| corpus configuration | spans | decode spans/s | map spans/s | convention | cases |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    for directory in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        payloads, log_payloads = replicate(directory, args.spans)
        records = decode_all(payloads)
        traces = assemble(records, log_payloads)
        decode_s = timed(lambda p=payloads: decode_all(p), args.rounds)  # type: ignore[misc]
        map_s = timed(lambda t=traces: [router.map(x) for x in t], args.rounds)  # type: ignore[misc]
        results = [router.map(t) for t in traces]
        cases = [c for r in results for c in r.cases]
        conventions = sorted({str(c.metadata.get("convention")) for c in cases}) or ["-"]
        all_cases += cases
        print(f"| {directory.name} | {len(records)} | {len(records) / decode_s:,.0f} | {len(records) / map_s:,.0f} "
              f"| {', '.join(conventions)} | {len(cases)} |")
    print()
    families = metrics_by_family()
    every = [m for group in families.values() for m in group]
    print(f"| metrics (all cases above: {len(all_cases)}) | metrics | cases/s through all of them |")
    print("| --- | ---: | ---: |")
    for family, group in sorted(families.items()):
        seconds = timed(lambda g=group: score_all(all_cases, g), args.rounds)  # type: ignore[misc]
        print(f"| {family} | {len(group)} | {len(all_cases) / seconds:,.0f} |")
    seconds = timed(lambda: score_all(all_cases, every), args.rounds)
    print(f"| every deterministic metric | {len(every)} | {len(all_cases) / seconds:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
