"""Start-up time of ``evald run`` (to ``/readyz`` answering 200) and ``evald replay`` (of one small file, to exit).

    python tests/benchmarks/bench_startup.py [--rounds 7]

``evald run`` uses the embedded default configuration's components (OTLP gRPC and HTTP receivers, Prometheus
exporter with /readyz, the three default metrics) on free ports; the clock starts before the process is spawned
and stops when ``GET /readyz`` first answers 200 (polled every 5 ms). ``evald replay`` scores one corpus trace with
the default metrics and exits. Reported: medians of wall time, and of the CPU time the process used (user + system,
from ``wait4``: what start-up costs when the machine is shared; the wall time also includes waiting for a core).
For comparison, ``python -c pass`` and ``python -c "import evald.cli"`` in the same run. The children run with
bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from their environment) after one uncounted warm-up
round, as an installed evald starts: compiling evald's sources on every start would add ~0.1-0.2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.integration.daemon import free_port  # noqa: E402

CONFIG = """receivers:
  otlp:
    grpc: {{ endpoint: "127.0.0.1:{grpc}" }}
    http: {{ endpoint: "127.0.0.1:{http}" }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{metrics}" }}
metrics:
  - {{ kind: error_free, scope: all }}
  - {{ kind: latency, scope: all, options: {{ max_ms: 30000 }} }}
  - {{ kind: token_usage, scope: all, options: {{ max_tokens: 8000 }} }}
telemetry: {{ logs: {{ level: warning }} }}
"""
TRACE = ROOT / "tests" / "testdata" / "corpus" / "otel-openai-v2.span_only" / "a_chat_correct.pb"


#: the children's environment: bytecode caching on (an installed package has its .pyc files)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _cpu(pid: int) -> tuple[int, float]:
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime


def time_command(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    status, cpu = _cpu(proc.pid)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return time.perf_counter() - start, cpu


def time_run(tmp: Path) -> tuple[float, float]:
    metrics = free_port()
    config = tmp / "run.yaml"
    config.write_text(CONFIG.format(grpc=free_port(), http=free_port(), metrics=metrics))
    url = f"http://127.0.0.1:{metrics}/readyz"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evald", "run", "-c", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        with httpx.Client(timeout=1) as client:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"evald run exited {proc.returncode}")
                try:
                    if client.get(url).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.005)
        wall = time.perf_counter() - start
        cpu_ticks = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(cpu_ticks[11]) + int(cpu_ticks[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime so far
    finally:
        proc.terminate()
        proc.wait(30)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        replay_config = Path(tmp) / "replay.yaml"
        replay_config.write_text("metrics:\n  - { kind: latency, options: { max_ms: 30000 } }\n")
        commands = {
            "python -c pass": lambda: time_command([sys.executable, "-c", "pass"]),
            "python -c 'import evald.cli'": lambda: time_command([sys.executable, "-c", "import evald.cli"]),
            "evald run (to /readyz 200)": lambda: time_run(Path(tmp)),
            "evald replay (one trace, to exit)": lambda: time_command(
                [sys.executable, "-m", "evald", "replay", str(TRACE), "-c", str(replay_config)]),
        }
        for measure in commands.values():
            measure()  # warm-up: writes the bytecode caches
        for round_no in range(1, args.rounds + 1):
            for name, measure in commands.items():
                rows.setdefault(name, []).append(measure())
            print(f"round {round_no}: " + ", ".join(f"{name} {rows[name][-1][0]:.3f} s ({rows[name][-1][1]:.2f} CPU)"
                                                    for name in commands), flush=True)
    print()
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (the machine has {os.cpu_count()} cores)")
    print("| command | median wall s | median CPU s |")
    print("| --- | ---: | ---: |")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(w for w, _ in values):.3f} | "
              f"{statistics.median(c for _, c in values):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
