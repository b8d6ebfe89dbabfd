"""What each convention of the full mix costs evald: CPU per span, per configuration, in one process.

    python tests/benchmarks/bench_mix_costs.py [--spans 4000] [--rounds 3] [--only PREFIX]

Every configuration of tests/testdata/corpus and tests/testdata/captured (full_mix.py) is replicated with fresh ids
to about ``--spans`` spans (its ``.logs.pb`` companions too) and written as ``.pb`` files; then ``evald.replay``
scores each configuration's files in process with the metrics of bench_e2e.py (error_free, latency, token_usage on
every case, contains on trace cases, json_valid on LLM calls): read, decode, window, mapping, scoring, the
in-memory exporter, i.e. the daemon's pipeline without gRPC. Reported per configuration: process CPU time per span
(median of ``--rounds``, the configurations interleaved in each round), spans per trace, cases per span, the
conventions evald mapped (from the cases' metadata), and the cost relative to ``otel-openai-v2.span_only``, the
mix of bench_e2e.py's default run. The last row is the full mix's span-weighted mean (every file once, as
``bench_e2e.py --mix full`` sends them).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from full_mix import renumbered, templates  # noqa: E402
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2  # noqa: E402
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: E402

from evald.cli import tune_gc  # noqa: E402
from evald.config.loader import parse_config  # noqa: E402
from evald.replay import replay  # noqa: E402

CONFIG = """assembly: { settle: 0.2s, decision_wait: 10s, num_traces: 100000 }
metrics:
  - { kind: error_free, scope: all }
  - { kind: latency, scope: all, options: { max_ms: 30000 } }
  - { kind: token_usage, scope: all, options: { max_tokens: 8000 } }
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
  - { kind: json_valid, scope: llm_call }
telemetry: { logs: { level: error } }
"""
REFERENCE = "otel-openai-v2.span_only"


def write_configuration(directory: Path, configuration: str, total_spans: int) -> int:
    """``configuration``'s templates replicated to about ``total_spans`` spans in files of 100 copies."""
    sources = [t for t in templates() if t.configuration == configuration]
    directory.mkdir(parents=True)
    spans = k = files = 0
    while spans < total_spans:
        traces = trace_service_pb2.ExportTraceServiceRequest()
        logs = logs_service_pb2.ExportLogsServiceRequest()
        for _ in range(100):
            k += 1
            template = sources[k % len(sources)]
            copy, copy_logs = renumbered(template, k)
            traces.resource_spans.extend(copy.resource_spans)
            if copy_logs is not None:
                logs.resource_logs.extend(copy_logs.resource_logs)
            spans += template.spans
        (directory / f"{files:04d}.pb").write_bytes(traces.SerializeToString())
        if logs.resource_logs:
            (directory / f"{files:04d}.logs.pb").write_bytes(logs.SerializeToString())
        files += 1
    return spans


def measure(directory: Path, spans: int) -> tuple[float, int, int, Counter[str]]:
    """(CPU seconds per span, traces, cases, conventions) of replaying ``directory``."""
    config = parse_config(CONFIG)
    started = time.process_time()
    result = asyncio.run(replay([directory], config))
    cpu = time.process_time() - started
    conventions = Counter(str(sc.case.metadata.get("convention", "?")) for sc in result.scored)
    return cpu / spans, result.counts.traces, len(result.scored), conventions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=4000, help="spans per configuration")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="configurations whose name starts with this")
    args = parser.parse_args()
    tune_gc()
    configurations = sorted({t.configuration for t in templates() if t.configuration.startswith(args.only)}
                            | {REFERENCE})
    weight = Counter[str]()
    for t in templates():
        weight[t.configuration] += t.spans
    with tempfile.TemporaryDirectory() as tmp:
        spans = {c: write_configuration(Path(tmp) / c, c, args.spans) for c in configurations}
        costs: dict[str, list[float]] = {c: [] for c in configurations}
        shape: dict[str, tuple[int, int, Counter[str]]] = {}
        for round_no in range(1, args.rounds + 1):
            for configuration in configurations:
                per_span, traces, cases, conventions = measure(Path(tmp) / configuration, spans[configuration])
                costs[configuration].append(per_span)
                shape[configuration] = (traces, cases, conventions)
            print(f"round {round_no} done", file=sys.stderr, flush=True)
    reference = statistics.median(costs[REFERENCE])
    print(f"| configuration | µs CPU per span | vs {REFERENCE} | spans/trace | cases/span | conventions mapped |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    rows = sorted(configurations, key=lambda c: -statistics.median(costs[c]))
    for configuration in rows:
        cost = statistics.median(costs[configuration])
        traces, cases, conventions = shape[configuration]
        mapped = ", ".join(f"{name} {n}" for name, n in conventions.most_common())
        print(f"| {configuration} | {cost * 1e6:,.0f} | {cost / reference:.2f} | {spans[configuration] / traces:.1f} | "
              f"{cases / spans[configuration]:.2f} | {mapped} |")
    weighted = (sum(statistics.median(costs[c]) * weight[c] for c in configurations if weight[c])
                / sum(weight[c] for c in configurations if weight[c]))
    print(f"| **full mix (span-weighted)** | {weighted * 1e6:,.0f} | {weighted / reference:.2f} | | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
