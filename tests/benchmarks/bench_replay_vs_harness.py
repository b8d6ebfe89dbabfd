"""Offline scoring speed: ``evald replay`` vs harness-evals on the same replicated corpus, side by side in one run.

    python tests/benchmarks/bench_replay_vs_harness.py [--spans 20000] [--rounds 5] [--core 1]

The input is the full mix of conventions (tests/benchmarks/full_mix.py: every trace file of tests/testdata/corpus
and tests/testdata/captured, with its log companion, replicated with fresh trace and span ids), written once as
``.pb`` files of 100 trace copies each. Each round runs both sides in turn, each in a fresh subprocess pinned to
one core (``taskset``); start-up (imports) is excluded, everything after it is timed:

* evald: ``evald replay DIR -c CONFIG --format json`` called in process (``evald.cli.main``: config load, file
  discovery and reading, decode, assembly window, mapping, goldens, scoring, summary), stdout discarded; the
  config is loaded once before the clock starts (that imports the configured metrics' modules, as the harness
  side imports its metric classes);
* harness-evals: read and decode every ``.pb`` file (protobuf -> the span dicts its OTel importer reads: name,
  ids, times, attributes), group the spans by trace, ``OTELEvalCaseSource.from_span_traces`` (one conversation
  case per trace), the same goldens looked up by input, then ``measure()`` of its six metrics on every case.

The six metrics on both sides: exact_match, contains (against the golden answer), latency (max 30 s), token
usage (harness' TokenCostMetric, max 8,000), tool_correctness (against the golden tools) and tool_argument_match
(expected ``get_weather(city=Paris)``, subset). evald scores its trace cases (the metrics' default scope); it also
maps every LLM call, which harness-evals does not do. Log companions (content of the event-based conventions) are
read by evald only: harness-evals' importer reads spans.

The workers run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from their environment), as an
installed package runs: a module imported for the first time inside the timed part is not compiled from source.
Reported per round and as medians: spans per CPU second of each side (``time.process_time`` of the timed part) and
their ratio, and the wall-clock rates (the machine is shared: CPU time is the steadier measure).

``--floor`` also runs, in each round and on the same core, two parts of evald's job alone, to show where its time
goes next to harness-evals' whole job: ``evald replay`` with one metric whose filter matches no case (an empty
``metrics`` list is refused): discovery, reading, decoding, the window and mapping, but no goldens, scoring or score
summary (every case ends as ``no_metric``); and the reading and decoding of the files alone (``read_signal_file`` on
each). Each is reported as CPU microseconds per span beside harness-evals' whole job, whose own steps are also
timed (decoding into span dicts, the importer, goldens and metrics: one clock read per step and file).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

GOLDENS = [
    {"input": "What is the capital of France?", "expected": "Paris"},
    {"input": "What is the largest planet in our solar system?", "expected": "Jupiter"},
    {"input": "What's the weather in Paris right now?", "expected_tools": ["get_weather"]},
]
EXPECTED_CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}

EVALD_CONFIG = """goldens: {{ file: {goldens} }}
metrics:
  - {{ kind: exact_match }}
  - {{ kind: contains }}
  - {{ kind: latency, options: {{ max_ms: 30000 }} }}
  - {{ kind: token_usage, options: {{ max_tokens: 8000 }} }}
  - {{ kind: tool_correctness }}
  - {{ kind: tool_argument_match, options: {{ expected_calls: [{call}], mode: subset }} }}
"""


def evald_worker(directory: Path, config: Path) -> dict[str, Any]:
    import evald.replay  # noqa: F401 - start-up excluded: imported before the clock starts
    import evald.service  # noqa: F401
    from evald.cli import main
    from evald.config.loader import load_config

    load_config(str(config))  # start-up too: imports the configured metrics' modules (~50 ms; harness' are imported)

    wall, cpu = time.perf_counter(), time.process_time()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["replay", str(directory), "-c", str(config), "--format", "json"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if status != 0:
        raise RuntimeError(f"evald replay exited {status}")
    return {"cpu": cpu, "wall": wall, "cases": json.loads(out.getvalue())["cases"]}


def decode_worker(directory: Path) -> dict[str, Any]:
    """Reading and decoding every input file (traces and log companions), as the replay reads them."""
    from evald.receivers.files import read_signal_file

    files = sorted(directory.glob("*.pb"))
    wall, cpu = time.perf_counter(), time.process_time()
    spans = sum(len(read_signal_file(path).spans) for path in files)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu": cpu, "wall": wall, "cases": 0, "spans": spans}


def _any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    return None if kind is None else getattr(value, kind)


def harness_worker(directory: Path) -> dict[str, Any]:
    from harness_evals.core.types import ToolCall
    from harness_evals.importers.otel import OTELEvalCaseSource
    from harness_evals.importers.trace_batch import SpanTrace
    from harness_evals.metrics.agent.tool_argument_match import ToolArgumentMatchMetric
    from harness_evals.metrics.agent.tool_correctness import ToolCorrectnessMetric
    from harness_evals.metrics.deterministic.contains import ContainsMetric
    from harness_evals.metrics.deterministic.exact_match import ExactMatchMetric
    from harness_evals.metrics.operational.latency import LatencyMetric
    from harness_evals.metrics.operational.token_cost import TokenCostMetric
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    metrics = [ExactMatchMetric(), ContainsMetric(), LatencyMetric(max_ms=30000), TokenCostMetric(max_tokens=8000),
               ToolCorrectnessMetric(mode="subset"), ToolArgumentMatchMetric(arg_match="subset")]
    goldens = {g["input"].strip().lower(): g for g in GOLDENS}
    files = sorted(p for p in directory.glob("*.pb") if not p.name.endswith(".logs.pb"))

    wall, cpu = time.perf_counter(), time.process_time()
    scores = []
    cases = 0
    steps = [0.0, 0.0, 0.0]  # CPU s: decoding into span dicts, the importer, goldens and metrics (83 clock reads)
    for path in files:
        step = time.process_time()
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(path.read_bytes())
        by_trace: dict[str, list[dict[str, Any]]] = {}
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    trace_id = span.trace_id.hex()
                    by_trace.setdefault(trace_id, []).append({
                        "name": span.name, "trace_id": trace_id, "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex() or None,
                        "start_time_unix_nano": span.start_time_unix_nano,
                        "end_time_unix_nano": span.end_time_unix_nano,
                        "attributes": {kv.key: _any_value(kv.value) for kv in span.attributes},
                    })
        traces = [SpanTrace(spans=spans, trace_id=trace_id) for trace_id, spans in by_trace.items()]
        imported = time.process_time()
        steps[0] += imported - step
        file_cases = list(OTELEvalCaseSource.from_span_traces(traces))
        step = time.process_time()
        steps[1] += step - imported
        for case in file_cases:
            golden = goldens.get(case.input.strip().lower()) if isinstance(case.input, str) else None
            if golden is not None:
                case.expected = golden.get("expected")
                case.expected_tools = golden.get("expected_tools")
            case.expected_tool_calls = [ToolCall(name=EXPECTED_CALL["name"], input=dict(EXPECTED_CALL["arguments"]))]
            scores.extend(metric.measure(case) for metric in metrics)
            cases += 1
        steps[2] += time.process_time() - step
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu": cpu, "wall": wall, "cases": cases, "scores": len(scores), "steps": steps}


def run_worker(side: str, directory: Path, config: Path, core: int) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--worker", side, "--dir", str(directory), "--config", str(config)]
    if shutil.which("taskset"):
        argv = ["taskset", "-c", str(core), *argv]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}  # as installed
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{side} worker failed: {done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--core", type=int, default=1, help="CPU core both sides are pinned to")
    parser.add_argument("--floor", action="store_true", help="also time evald without metrics, and decoding alone")
    parser.add_argument("--worker", choices=("evald", "harness", "decode"), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        result = (evald_worker(args.dir, args.config) if args.worker == "evald" else harness_worker(args.dir)
                  if args.worker == "harness" else decode_worker(args.dir))
        print(json.dumps(result))
        return 0

    from full_mix import write_directory

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "mix"
        spans, files = write_directory(directory, args.spans)
        goldens = Path(tmp) / "goldens.jsonl"
        goldens.write_text("".join(json.dumps(g) + "\n" for g in GOLDENS))
        config = Path(tmp) / "replay.yaml"
        config.write_text(EVALD_CONFIG.format(goldens=goldens, call=json.dumps(EXPECTED_CALL)))
        bare = Path(tmp) / "no_metrics.yaml"
        bare.write_text('metrics:\n  - { kind: error_free, filter: { service_name: ["-no-such-service-"] } }\n')
        print(f"{spans} spans in {files} files of the full mix; both sides pinned to core {args.core}", flush=True)
        rows: list[tuple[float, float, float, float]] = []
        floors: list[tuple[float, float, float, float]] = []  # µs per span: harness, evald, evald no metric, decode
        for round_no in range(1, args.rounds + 1):
            ev = run_worker("evald", directory, config, args.core)
            ha = run_worker("harness", directory, config, args.core)
            if args.floor:
                bare_run = run_worker("evald", directory, bare, args.core)
                decoded = run_worker("decode", directory, config, args.core)
                h, e, b, d = (1e6 * r["cpu"] / spans for r in (ha, ev, bare_run, decoded))
                floors.append((h, e, b, d))
                hd, hi, hm = (1e6 * t / spans for t in ha["steps"])
                print(f"round {round_no}: CPU µs per span: harness-evals {h:.1f} (decoding into span dicts {hd:.1f}, "
                      f"importer {hi:.1f}, goldens and metrics {hm:.1f}), evald {e:.1f}, evald without metrics "
                      f"{b:.1f}, decoding alone {d:.1f}", flush=True)
            rows.append((spans / ev["cpu"], spans / ha["cpu"], spans / ev["wall"], spans / ha["wall"]))
            print(f"round {round_no}: evald {rows[-1][0]:,.0f} spans/CPU-s ({ev['cases']} cases), harness-evals "
                  f"{rows[-1][1]:,.0f} spans/CPU-s ({ha['cases']} cases, {ha['scores']} scores): ratio "
                  f"{rows[-1][0] / rows[-1][1]:.2f} (wall: {rows[-1][2]:,.0f} vs {rows[-1][3]:,.0f} spans/s)",
                  flush=True)
    ratios = [e / h for e, h, _, _ in rows]
    wall_ratios = [e / h for _, _, e, h in rows]
    print()
    print("| | median spans per CPU second | median spans/s (wall) |")
    print("| --- | ---: | ---: |")
    print(f"| evald replay | {statistics.median(r[0] for r in rows):,.0f} | "
          f"{statistics.median(r[2] for r in rows):,.0f} |")
    print(f"| harness-evals | {statistics.median(r[1] for r in rows):,.0f} | "
          f"{statistics.median(r[3] for r in rows):,.0f} |")
    print(f"| ratio evald / harness-evals (median of per-round ratios) | {statistics.median(ratios):.2f} "
          f"({', '.join(f'{r:.2f}' for r in ratios)}) | {statistics.median(wall_ratios):.2f} |")
    if floors:
        names = ("harness-evals, the whole job", "evald replay, the whole job", "evald replay without metrics",
                 "evald: reading and decoding alone")
        print()
        print("| CPU µs per span (median) | | × harness-evals |")
        print("| --- | ---: | ---: |")
        for i, name in enumerate(names):
            column = [f[i] for f in floors]
            print(f"| {name} | {statistics.median(column):.1f} | "
                  f"{statistics.median(c / f[0] for c, f in zip(column, floors, strict=True)):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
