"""End-to-end throughput of evald vs a bare parse-only OTLP gRPC server, side by side in one run.

    python tests/benchmarks/bench_e2e.py [--spans 200000] [--rounds 3] [--core 0]

Both servers are subprocesses pinned to one core (``taskset``); the client runs on the other core and sends
pre-serialized ``ExportTraceServiceRequest`` bytes with a few requests in flight, so the client is never the
bottleneck. The spans are the GenAI-semconv corpus traces (span_only shape) replicated with fresh trace and
span ids.

* reference: a grpc.aio server that parses every request and touches every span field (ids, names, times,
  every attribute value, events, status); its clock stops when the last request is answered.
* evald: ``evald run`` with the deterministic starter metrics; its clock stops when every trace has been scored
  (``evald_scored_cases_total{scope="trace"}`` reaches the number of traces sent), i.e. received, assembled,
  mapped, scored and exported to Prometheus. The assembly ``settle`` is 0.2 s, included in the time. The counter
  is probed every 0.05 s from the moment the last request was answered, asking ``/metrics?name[]=`` for that one
  counter only, so the probe costs evald next to nothing.

Reported: spans/s for each (median of rounds), their ratio, and evald's peak RSS (VmHWM). The rounds alternate
reference and evald so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.integration.daemon import free_port  # noqa: E402
from tests.judges.load_traces import renumbered, templates  # noqa: E402

REFERENCE_SERVER = textwrap.dedent('''
    import asyncio, sys
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    def touch(value):
        kind = value.WhichOneof("value")
        if kind == "kvlist_value":
            return sum(len(kv.key) + touch(kv.value) for kv in value.kvlist_value.values)
        if kind == "array_value":
            return sum(touch(v) for v in value.array_value.values)
        return 0 if kind is None else len(str(getattr(value, kind)))

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        spans = 0
        async def Export(self, request, context):
            for rs in request.resource_spans:
                for kv in rs.resource.attributes:
                    touch(kv.value)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        n = len(s.trace_id.hex()) + len(s.span_id.hex()) + len(s.parent_span_id.hex()) + len(s.name)
                        n += s.start_time_unix_nano + s.end_time_unix_nano + s.kind + s.status.code
                        for kv in s.attributes:
                            n += touch(kv.value)
                        for ev in s.events:
                            for kv in ev.attributes:
                                n += touch(kv.value)
                        Service.spans += 1
            return trace_service_pb2.ExportTraceServiceResponse()

    async def main():
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
        server.add_insecure_port("127.0.0.1:" + sys.argv[1])
        await server.start()
        print("ready", flush=True)
        await server.wait_for_termination()

    asyncio.run(main())
''')

EVALD_CONFIG = """receivers:
  otlp:
    grpc: {{ endpoint: "127.0.0.1:{grpc}", max_recv_msg_size_mib: 64 }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{metrics}" }}
assembly: {{ settle: 0.2s, decision_wait: 10s, num_traces: 100000 }}
metrics:
  - {{ kind: error_free, scope: all }}
  - {{ kind: latency, scope: all, options: {{ max_ms: 30000 }} }}
  - {{ kind: token_usage, scope: all, options: {{ max_tokens: 8000 }} }}
  - {{ kind: contains, scope: trace, options: {{ values: ["Paris"] }} }}
  - {{ kind: json_valid, scope: llm_call }}
pipeline: {{ workers: 2, queue_size: 100000 }}
telemetry: {{ logs: {{ level: warning }} }}
"""


def build_requests(total_spans: int, traces_per_request: int = 100) -> tuple[list[bytes], int, int]:
    """Corpus traces replicated with fresh ids; returns (serialized requests, spans, traces)."""
    sources = templates()
    out: list[bytes] = []
    spans = traces = 0
    while spans < total_spans:
        request = trace_service_pb2.ExportTraceServiceRequest()
        for _ in range(traces_per_request):
            trace = renumbered(sources[traces % len(sources)], traces + 1)
            spans += sum(len(ss.spans) for rs in trace.resource_spans for ss in rs.scope_spans)
            request.resource_spans.extend(trace.resource_spans)
            traces += 1
        out.append(request.SerializeToString())
    return out, spans, traces


def send_all(port: int, payloads: list[bytes], in_flight: int = 4) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
    export = channel.unary_unary(
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        request_serializer=lambda b: b,
        response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
    )

    def one(payload: bytes) -> None:
        for _ in range(200):
            try:
                export(payload, timeout=30)
                return
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                time.sleep(0.05)
        raise RuntimeError("server stayed UNAVAILABLE")

    with ThreadPoolExecutor(in_flight) as pool:
        list(pool.map(one, payloads))
    channel.close()


def pinned(core: int, argv: list[str]) -> list[str]:
    return (["taskset", "-c", str(core)] if shutil.which("taskset") else []) + argv


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        try:
            grpc.channel_ready_future(channel).result(timeout=0.5)
            return
        except grpc.FutureTimeoutError:
            pass
        finally:
            channel.close()
    raise RuntimeError("server did not start")


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else float("nan")


def run_reference(payloads: list[bytes], spans: int, core: int) -> float:
    port = free_port()
    proc = subprocess.Popen(pinned(core, [sys.executable, "-c", REFERENCE_SERVER, str(port)]),
                            stdout=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        start = time.perf_counter()
        send_all(port, payloads)
        return spans / (time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(10)


def scored_traces(metrics_port: int) -> float:
    # only this counter (``name[]``): a full scrape costs evald ~9 ms of CPU, which at one probe every 0.05 s would
    # be ~18% of the core it is measured on (while it finishes the last traces); this one costs well under 1 ms
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", params={"name[]": "evald_scored_cases_total"},
                     timeout=5).text
    match = re.search(r'^evald_scored_cases_total\{scope="trace"\} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


def run_evald(payloads: list[bytes], spans: int, traces: int, core: int, tmp: Path) -> tuple[float, float]:
    grpc_port, metrics_port = free_port(), free_port()
    config = tmp / "bench.yaml"
    config.write_text(EVALD_CONFIG.format(grpc=grpc_port, metrics=metrics_port))
    log = (tmp / "evald.log").open("wb")
    proc = subprocess.Popen(pinned(core, [sys.executable, "-m", "evald", "run", "--config", str(config)]),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_port(grpc_port, proc)
        except RuntimeError as err:
            log.flush()
            raise RuntimeError(f"{err}: {(tmp / 'evald.log').read_text()[-3000:]}") from None
        start = time.perf_counter()
        send_all(grpc_port, payloads)
        deadline = time.monotonic() + 600
        while scored_traces(metrics_port) < traces:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"evald did not score every trace: {(tmp / 'evald.log').read_text()[-3000:]}")
            time.sleep(0.05)  # probed only once the last request was answered
        elapsed = time.perf_counter() - start
        return spans / elapsed, peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=0, help="CPU core both servers are pinned to")
    args = parser.parse_args()
    payloads, spans, traces = build_requests(args.spans)
    print(f"{spans} spans in {traces} traces, {len(payloads)} requests, "
          f"{sum(map(len, payloads)) / 1e6:.1f} MB; servers pinned to core {args.core}; cpus={os.cpu_count()}")
    ref_rates: list[float] = []
    evald_rates: list[float] = []
    rss: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(1, args.rounds + 1):
            ref = run_reference(payloads, spans, args.core)
            rate, peak = run_evald(payloads, spans, traces, args.core, Path(tmp))
            ref_rates.append(ref)
            evald_rates.append(rate)
            rss.append(peak)
            print(f"round {round_no}: reference {ref:,.0f} spans/s  evald {rate:,.0f} spans/s  "
                  f"ratio {rate / ref:.3f}  evald peak RSS {peak:.0f} MB", flush=True)
    ratios = [e / r for e, r in zip(evald_rates, ref_rates, strict=True)]
    print()
    print("| | median spans/s |")
    print("| --- | ---: |")
    print(f"| bare parse-only gRPC server | {statistics.median(ref_rates):,.0f} |")
    print(f"| evald end to end (received → scored → exported) | {statistics.median(evald_rates):,.0f} |")
    print(f"| ratio evald / reference (median of per-round ratios) | {statistics.median(ratios):.3f} |")
    print(f"| evald peak RSS (max over rounds) | {max(rss):.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
