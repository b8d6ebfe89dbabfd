"""Start ``evald run`` as a real subprocess on free 127.0.0.1 ports, and stop it by its own handle."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_evald(config_path: Path, log_path: Path, ready_url: str, timeout: float = 20.0) -> subprocess.Popen[bytes]:
    """``evald run --config config_path`` with its output in ``log_path``; returns once ``ready_url``
    answers 200. If evald exits or is not ready in time, it is stopped and ``RuntimeError`` carries its log."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evald", "run", "--config", str(config_path)],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"evald exited with {proc.returncode}:\n{_read(log_path)}")
        try:
            if httpx.get(ready_url, timeout=0.5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    proc.wait(5)
    raise RuntimeError(f"evald did not become ready:\n{_read(log_path)}")


def stop_evald(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> int:
    """SIGTERM and wait for the exit code; killed (and ``TimeoutExpired`` raised) if it does not exit in time."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
        raise


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


class Daemon:
    def __init__(self, tmp: Path, config_body: str) -> None:
        self.grpc_port, self.http_port, self.metrics_port = free_port(), free_port(), free_port()
        self.config_path = tmp / "evald.yaml"
        self.config_path.write_text(
            f"""receivers:
  otlp:
    grpc: {{ endpoint: "127.0.0.1:{self.grpc_port}" }}
    http: {{ endpoint: "127.0.0.1:{self.http_port}" }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{self.metrics_port}", pass_rate_window: 1m }}
{config_body}
"""
        )
        self.log_path = tmp / "evald.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}"

    def start(self, timeout: float = 20.0) -> Daemon:
        self.proc = start_evald(self.config_path, self.log_path, f"{self.metrics_url}/readyz", timeout)
        return self

    def log(self) -> str:
        return _read(self.log_path)

    def scrape(self) -> str:
        return httpx.get(f"{self.metrics_url}/metrics", timeout=2).text

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        return stop_evald(self.proc, timeout)

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()
