"""Protobuf trace request -> SpanRecords per span: the old path (upb parse + convert_traces) against the wire decoder
(evald/receivers/wire_traces.py), side by side in one run, on the full mix of conventions (full_mix.py).

    python tests/benchmarks/bench_wire_decoder.py [--spans 20000] [--rounds 7]

Run it on a compiled build (``python3 setup.py build_ext --inplace`` in a worktree, then ``PYTHONPATH=<worktree>``);
it says which of the two modules run compiled. Each round times the old path, the upb parse alone and the wire
decoder over every request (process CPU time, alternating, so drift hits all three alike); the medians over the
rounds are printed per span. Before timing, both paths' results are compared on every request (they must be
equal, and the wire decoder must decline none of them).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import evald.receivers.convert as convert
import evald.receivers.wire_traces as wire_traces
from evald.receivers.convert import convert_traces
from evald.receivers.wire_traces import decode_trace_request
from tests.benchmarks.full_mix import build_requests


def old_path(body: bytes) -> object:
    return convert_traces(ExportTraceServiceRequest.FromString(body))


def parse_only(body: bytes) -> object:
    return ExportTraceServiceRequest.FromString(body)


def timed(function: Callable[[bytes], object], bodies: list[bytes]) -> float:
    started = time.process_time()
    for body in bodies:
        function(body)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    bodies, _, spans, files = build_requests(args.spans)
    print(f"{spans} spans in {len(bodies)} requests ({files} trace files of the full mix), "
          f"{sum(map(len, bodies)) / spans:.0f} bytes per span")
    print(f"compiled: convert={convert.__file__.endswith('.so')} wire_traces={wire_traces.compiled()}")
    for body in bodies:
        new, old = decode_trace_request(body), convert_traces(ExportTraceServiceRequest.FromString(body))
        assert new == old, "the wire decoder disagrees with the old path"
    results: dict[str, list[float]] = {"old (parse + convert_traces)": [], "  of which upb parse": [],
                                       "wire decoder": []}
    for _ in range(args.rounds):
        for (_, samples), function in zip(results.items(), (old_path, parse_only, decode_trace_request), strict=True):
            samples.append(timed(function, bodies) / spans * 1e6)
    medians = {name: statistics.median(samples) for name, samples in results.items()}
    for name, median in medians.items():
        spread = ", ".join(f"{s:.2f}" for s in results[name])
        print(f"{name:30s} {median:6.2f} us/span  (rounds: {spread})")
    old, new = medians["old (parse + convert_traces)"], medians["wire decoder"]
    print(f"wire decoder / old: {new / old:.2f} ({old / new:.1f}x faster)")


if __name__ == "__main__":
    main()
