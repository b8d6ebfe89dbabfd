"""Protobuf request -> records per item: the old path (upb parse + convert_traces / convert_logs) against the wire
decoders (evald/receivers/wire_traces.py, wire_logs.py), side by side in one run, on the full mix of conventions
(full_mix.py: trace requests and the log companions of the event-based conventions).

    python tests/benchmarks/bench_wire_decoder.py [--spans 20000] [--rounds 7]

Run it on a compiled build (``python3 setup.py build_ext --inplace`` in a worktree, then ``PYTHONPATH=<worktree>``);
it says which modules run compiled. Each round times the old path, the upb parse alone and the wire decoder over
every request (process CPU time, alternating, so drift hits all alike); the medians over the rounds are printed
per span / log record. Before timing, both paths' results are compared on every request (they must be equal, and
the wire decoders must decline none of them).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import evald.receivers.convert as convert
import evald.receivers.wire_logs as wire_logs
import evald.receivers.wire_traces as wire_traces
from evald.receivers.convert import convert_logs, convert_traces
from evald.receivers.wire_logs import decode_logs_request
from evald.receivers.wire_traces import decode_trace_request
from tests.benchmarks.full_mix import build_requests


def old_path(body: bytes) -> object:
    return convert_traces(ExportTraceServiceRequest.FromString(body))


def parse_only(body: bytes) -> object:
    return ExportTraceServiceRequest.FromString(body)


def old_logs(body: bytes) -> object:
    return convert_logs(ExportLogsServiceRequest.FromString(body))


def parse_logs_only(body: bytes) -> object:
    return ExportLogsServiceRequest.FromString(body)


def timed(function: Callable[[bytes], object], bodies: list[bytes]) -> float:
    started = time.process_time()
    for body in bodies:
        function(body)
    return time.process_time() - started


def compare(title: str, bodies: list[bytes], functions: tuple[Callable[[bytes], object], ...], items: int,
            rounds: int) -> None:
    """Time (old path, upb parse, wire decoder) over ``bodies`` for ``rounds`` rounds; print the medians per item."""
    results: dict[str, list[float]] = {"old (upb parse + convert)": [], "  of which upb parse": [], "wire decoder": []}
    for _ in range(rounds):
        for samples, function in zip(results.values(), functions, strict=True):
            samples.append(timed(function, bodies) / items * 1e6)
    print(title)
    medians = {name: statistics.median(samples) for name, samples in results.items()}
    for name, median in medians.items():
        spread = ", ".join(f"{s:.2f}" for s in results[name])
        print(f"  {name:28s} {median:6.2f} us  (rounds: {spread})")
    old, new = medians["old (upb parse + convert)"], medians["wire decoder"]
    print(f"  wire decoder / old: {new / old:.2f} ({old / new:.1f}x faster)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    bodies, log_bodies, spans, files = build_requests(args.spans)
    log_bodies = [body for body in log_bodies if body]
    print(f"{spans} spans in {len(bodies)} requests ({files} trace files of the full mix), "
          f"{sum(map(len, bodies)) / spans:.0f} bytes per span")
    print(f"compiled: convert={convert.__file__.endswith('.so')} wire_traces={wire_traces.compiled()} "
          f"wire_logs={wire_logs.compiled()}")
    for body in bodies:
        assert decode_trace_request(body) == old_path(body), "the trace decoder disagrees with the old path"
    records = 0
    for body in log_bodies:
        converted = decode_logs_request(body)
        assert converted == old_logs(body), "the log decoder disagrees with the old path"
        records += len(converted.records)
    compare("per span (trace requests):", bodies, (old_path, parse_only, decode_trace_request), spans, args.rounds)
    compare(f"per log record ({records} in {len(log_bodies)} log requests):", log_bodies,
            (old_logs, parse_logs_only, decode_logs_request), records, args.rounds)


if __name__ == "__main__":
    main()
