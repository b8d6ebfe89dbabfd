"""Cost of the receiver write-ahead log (evald/receivers/wal.py), and why it stores the body as received.

    python tests/benchmarks/bench_receiver_wal.py [--requests 5000] [--concurrency 32] [--dir DIR]

1. Per corpus request (protobuf traces of tests/testdata): the decode the receiver does anyway (``decode_traces``),
   against re-encoding the converted spans as an ``ExportTraceServiceRequest`` (the alternative to storing the
   body as received; a minimal encoder here: ids, names, times, status, scalar attributes, resource and scope, so
   a lower bound), and the bytes each would store.
2. The log itself: ``--requests`` corpus bodies appended by ``--concurrency`` concurrent requests (as the
   receivers do: admit, append, wait for the commit), each row's delivery released at once (so rows are deleted
   too), with ``fsync`` true and false; reported: requests/s, commit latency p50/p99, commits (concurrent requests
   share one).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import AnyValue  # noqa: E402

from evald.model import SpanRecord  # noqa: E402
from evald.receivers.ingest import decode_traces  # noqa: E402
from evald.receivers.wal import ReceiverWal, ReceiverWalConfig  # noqa: E402
from evald.telemetry import Telemetry  # noqa: E402
from tests.receivers.fuzz_inputs import Corpus  # noqa: E402


def _value(out: AnyValue, v: Any) -> None:
    if isinstance(v, bool):
        out.bool_value = v
    elif isinstance(v, int):
        out.int_value = v
    elif isinstance(v, float):
        out.double_value = v
    else:
        out.string_value = str(v)


def encode(spans: tuple[SpanRecord, ...]) -> bytes:
    """The converted spans back to OTLP protobuf (one resource/scope per span: a lower bound of the real work)."""
    request = ExportTraceServiceRequest()
    for s in spans:
        rs = request.resource_spans.add()
        for k, v in s.resource.items():
            _value(rs.resource.attributes.add(key=k).value, v)
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = s.scope_name, s.scope_version
        span = ss.spans.add(trace_id=bytes.fromhex(s.trace_id), span_id=bytes.fromhex(s.span_id), name=s.name,
                            kind=s.kind, start_time_unix_nano=s.start_time_unix_nano,
                            end_time_unix_nano=s.end_time_unix_nano)
        if s.parent_span_id:
            span.parent_span_id = bytes.fromhex(s.parent_span_id)
        span.status.code, span.status.message = s.status_code, s.status_message
        for k, v in s.attributes.items():
            _value(span.attributes.add(key=k).value, v)
    return request.SerializeToString()


def per_request(bodies: list[bytes], rounds: int = 20) -> None:
    decode_s = encode_s = 0.0
    raw = encoded = 0
    for _ in range(rounds):
        for body in bodies:
            t0 = time.perf_counter()
            converted = decode_traces(body, "protobuf")
            t1 = time.perf_counter()
            out = encode(converted.records)
            t2 = time.perf_counter()
            decode_s += t1 - t0
            encode_s += t2 - t1
            raw += len(body)
            encoded += len(out)
    n = rounds * len(bodies)
    print(f"corpus: {len(bodies)} protobuf trace requests, {raw / n / 1024:.1f} KiB each on average")
    print(f"  decode+convert (done anyway): {decode_s / n * 1e6:8.1f} us/request")
    print(f"  re-encode converted spans:    {encode_s / n * 1e6:8.1f} us/request, {encoded / raw:.2f}x the bytes")
    print("  store the body as received:        0.0 us/request, 1.00x the bytes")


async def log_throughput(bodies: list[bytes], requests: int, concurrency: int, fsync: bool, directory: str) -> None:
    wal = ReceiverWal(ReceiverWalConfig(directory=directory, max_megabytes=1024, fsync=fsync), f"bench-{fsync}",
                      Telemetry())
    await wal.open()
    latencies: list[float] = []
    commits = 0
    original = wal._commit

    def counting(*args: Any) -> int:
        nonlocal commits
        commits += 1
        return original(*args)

    wal._commit = counting  # type: ignore[method-assign]
    queue = iter(range(requests))

    async def client() -> None:
        for i in queue:
            body = bodies[i % len(bodies)]
            t0 = time.perf_counter()
            entry = wal.admit(len(body))
            await wal.append(entry, "traces", "protobuf", body)  # sealed: the row is deleted in a later commit
            latencies.append(time.perf_counter() - t0)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    took = time.perf_counter() - started
    while wal.rows:  # noqa: ASYNC110 - polling the log's own counter until its deletes are committed
        await asyncio.sleep(0.01)
    await wal.close()
    latencies.sort()
    print(f"  fsync={str(fsync).lower():5}  {requests / took:8.0f} requests/s  commit p50 "
          f"{statistics.median(latencies) * 1e3:6.2f} ms  p99 {latencies[int(len(latencies) * 0.99)] * 1e3:6.2f} ms"
          f"  {commits} commits for {requests} requests (+ deletes)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    bodies = Corpus().pb["traces"]
    per_request(bodies)
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        print(f"log: {args.requests} requests, {args.concurrency} concurrent, in {directory}")
        for fsync in (True, False):
            asyncio.run(log_throughput(bodies, args.requests, args.concurrency, fsync, directory))


if __name__ == "__main__":
    main()
