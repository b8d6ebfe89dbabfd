"""End-to-end throughput of evald vs a bare parse-only OTLP gRPC server, side by side in one run.

    python tests/benchmarks/bench_e2e.py [--spans 200000] [--rounds 3] [--core 0] [--mix openai-v2|full]

Both servers are subprocesses pinned to one core (``taskset``); the client runs on the other core and sends
pre-serialized ``ExportTraceServiceRequest`` bytes with a few requests in flight, so the client is never the
bottleneck. The spans are the GenAI-semconv corpus traces (span_only shape) replicated with fresh trace and
span ids (``--mix openai-v2``, the default), or the full mix of conventions (``--mix full``: every trace file of
tests/testdata/corpus and tests/testdata/captured, see full_mix.py), whose log companions (the content of the
event-based conventions) are sent as ``ExportLogsServiceRequest``s right before the traces they belong to, to both
servers.

* reference: a grpc.aio server that parses every request and touches every span field (ids, names, times,
  every attribute value, events, status); its clock stops when the last request is answered.
* evald: ``evald run`` with the deterministic starter metrics; its clock stops when every trace has been scored
  (``evald_scored_cases_total{scope="trace"}`` reaches the number of traces sent), i.e. received, assembled,
  mapped, scored and exported to Prometheus. The assembly ``settle`` is 0.2 s, included in the time. The counter
  is probed every 0.05 s from the moment the last request was answered, asking ``/metrics?name[]=`` for that one
  counter only, so the probe costs evald next to nothing. With ``--mix full``, where a trace may give no trace case
  (no GenAI span, not evaluable), the clock stops when every trace sent was released by the window and every case
  mapped was scored (``evald_assembly_released_traces_total`` and ``evald_scored_cases_total`` =
  ``evald_cases_total``, the same three series asked for by name), with ``decision_wait`` 1 s instead of 10 s
  (some captured traces have no root span, and wait for it until ``decision_wait``).

Reported: spans/s for each (median of rounds), their ratio, and evald's peak RSS (VmHWM). The rounds alternate
reference and evald so machine noise hits both alike. Also the CPU time each server used over its measured interval
(utime + stime from ``/proc``), as spans per CPU second and their ratio: on a shared machine a server pinned to a
busy core waits for it, and the CPU ratio is the steadier figure (it leaves out evald's idle settle waits).
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
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks import full_mix  # noqa: E402
from tests.integration.daemon import free_port  # noqa: E402
from tests.judges.load_traces import renumbered, templates  # noqa: E402

REFERENCE_SERVER = textwrap.dedent('''
    import asyncio, sys
    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
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

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        async def Export(self, request, context):
            for rl in request.resource_logs:
                for kv in rl.resource.attributes:
                    touch(kv.value)
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        n = len(r.trace_id.hex()) + len(r.span_id.hex()) + r.time_unix_nano + r.severity_number
                        n += len(r.event_name) + touch(r.body)
                        for kv in r.attributes:
                            n += touch(kv.value)
            return logs_service_pb2.ExportLogsServiceResponse()

    async def main():
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
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


def build_full_mix(total_spans: int) -> tuple[list[bytes], list[bytes], int, int]:
    """The full mix (full_mix.py) as (trace requests, aligned log requests, spans, distinct traces)."""
    payloads, logs, spans, _ = full_mix.build_requests(total_spans)
    traces = len({span.trace_id for body in payloads
                  for rs in trace_service_pb2.ExportTraceServiceRequest.FromString(body).resource_spans
                  for ss in rs.scope_spans for span in ss.spans})
    return payloads, logs, spans, traces


def send_all(port: int, payloads: list[bytes], in_flight: int = 4, logs: list[bytes] | None = None) -> None:
    """Every trace request, ``in_flight`` at a time; log request ``i`` (when not empty) right before trace request
    ``i``, on the same worker (logs that arrive first wait in the window for their spans; sent after them, a
    server behind on its backlog could release a trace before its logs arrive)."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
    export = channel.unary_unary(
        "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        request_serializer=lambda b: b,
        response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
    )
    export_logs = channel.unary_unary(
        "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
        request_serializer=lambda b: b,
        response_deserializer=logs_service_pb2.ExportLogsServiceResponse.FromString,
    )

    def call(method: grpc.UnaryUnaryMultiCallable, payload: bytes) -> None:
        for _ in range(200):
            try:
                method(payload, timeout=30)
                return
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                time.sleep(0.05)
        raise RuntimeError("server stayed UNAVAILABLE")

    def one(index: int) -> None:
        if logs and logs[index]:
            call(export_logs, logs[index])
        call(export, payloads[index])

    with ThreadPoolExecutor(in_flight) as pool:
        list(pool.map(one, range(len(payloads))))
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


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def waited_seconds(pid: int) -> float:
    """Time the threads of process ``pid`` spent runnable but waiting for a CPU, so far, summed over its threads
    (``schedstat``): how busy the shared core was while evald ran."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def run_reference(payloads: list[bytes], spans: int, core: int, logs: list[bytes] | None = None,
                  ) -> tuple[float, float]:
    port = free_port()
    proc = subprocess.Popen(pinned(core, [sys.executable, "-c", REFERENCE_SERVER, str(port)]),
                            stdout=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        cpu, start = cpu_seconds(proc.pid), time.perf_counter()
        send_all(port, payloads, logs=logs)
        return spans / (time.perf_counter() - start), spans / (cpu_seconds(proc.pid) - cpu)
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


def mix_done(metrics_port: int, traces: int) -> bool:
    """Full mix: every trace released by the window, and every case mapped from them scored."""
    names = ("evald_scored_cases_total", "evald_cases_total", "evald_assembly_released_traces_total")
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", params={"name[]": list(names)}, timeout=5).text
    totals = {name: sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))
              for name in names}
    return (totals["evald_assembly_released_traces_total"] >= traces
            and totals["evald_scored_cases_total"] >= totals["evald_cases_total"] > 0)


def run_evald(payloads: list[bytes], spans: int, traces: int, core: int, tmp: Path,
              logs: list[bytes] | None = None) -> tuple[float, float, float, float]:
    grpc_port, metrics_port = free_port(), free_port()
    config = tmp / "bench.yaml"
    # the full mix holds traces whose root span was never recorded (released after decision_wait, not settle): 1 s
    # keeps the last of them from adding 10 s of waiting to the measured time
    body = EVALD_CONFIG.format(grpc=grpc_port, metrics=metrics_port)
    config.write_text(body.replace("decision_wait: 10s", "decision_wait: 1s") if logs is not None else body)
    log = (tmp / "evald.log").open("wb")
    proc = subprocess.Popen(pinned(core, [sys.executable, "-m", "evald", "run", "--config", str(config)]),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_port(grpc_port, proc)
        except RuntimeError as err:
            log.flush()
            raise RuntimeError(f"{err}: {(tmp / 'evald.log').read_text()[-3000:]}") from None
        cpu, waited, start = cpu_seconds(proc.pid), waited_seconds(proc.pid), time.perf_counter()
        send_all(grpc_port, payloads, logs=logs)
        deadline = time.monotonic() + 600
        while not (mix_done(metrics_port, traces) if logs is not None else scored_traces(metrics_port) >= traces):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"evald did not score every trace: {(tmp / 'evald.log').read_text()[-3000:]}")
            time.sleep(0.05)  # probed only once the last request was answered
        elapsed = time.perf_counter() - start
        waited = (waited_seconds(proc.pid) - waited) / elapsed
        return spans / elapsed, spans / (cpu_seconds(proc.pid) - cpu), peak_rss_mb(proc.pid), waited
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=0, help="CPU core both servers are pinned to")
    parser.add_argument("--mix", choices=("openai-v2", "full"), default="openai-v2",
                        help="the GenAI-semconv corpus traces (default) or every convention of corpus and captures")
    args = parser.parse_args()
    logs: list[bytes] | None = None
    if args.mix == "full":
        payloads, logs, spans, traces = build_full_mix(args.spans)
    else:
        payloads, spans, traces = build_requests(args.spans)
    size = sum(map(len, payloads)) + sum(map(len, logs or []))
    print(f"{args.mix} mix: {spans} spans in {traces} traces, {len(payloads)} requests, {size / 1e6:.1f} MB "
          f"(log requests: {sum(1 for body in logs or [] if body)}); servers pinned to core {args.core}; "
          f"cpus={os.cpu_count()}")
    ref_rates: list[float] = []
    evald_rates: list[float] = []
    cpu_ratios: list[float] = []
    rss: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(1, args.rounds + 1):
            ref, ref_cpu = run_reference(payloads, spans, args.core, logs)
            rate, rate_cpu, peak, waited = run_evald(payloads, spans, traces, args.core, Path(tmp), logs)
            ref_rates.append(ref)
            evald_rates.append(rate)
            cpu_ratios.append(rate_cpu / ref_cpu)
            rss.append(peak)
            print(f"round {round_no}: reference {ref:,.0f} spans/s  evald {rate:,.0f} spans/s  "
                  f"ratio {rate / ref:.3f}  evald peak RSS {peak:.0f} MB  (per CPU second: reference {ref_cpu:,.0f}, "
                  f"evald {rate_cpu:,.0f}, ratio {rate_cpu / ref_cpu:.3f}; evald's threads waited {waited:.2f} s for a "
                  "CPU per second)", flush=True)
    ratios = [e / r for e, r in zip(evald_rates, ref_rates, strict=True)]
    print()
    print("| | median spans/s |")
    print("| --- | ---: |")
    print(f"| bare parse-only gRPC server | {statistics.median(ref_rates):,.0f} |")
    print(f"| evald end to end (received → scored → exported) | {statistics.median(evald_rates):,.0f} |")
    print(f"| ratio evald / reference (median of per-round ratios) | {statistics.median(ratios):.3f} "
          f"({', '.join(f'{r:.3f}' for r in ratios)}) |")
    print(f"| ratio of spans per CPU second (median of per-round ratios) | {statistics.median(cpu_ratios):.3f} "
          f"({', '.join(f'{r:.3f}' for r in cpu_ratios)}) |")
    print(f"| evald peak RSS (max over rounds) | {max(rss):.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
