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
        log = self.log_path.open("wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "evald", "run", "--config", str(self.config_path)],
            stdout=log, stderr=subprocess.STDOUT, env=env,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"evald exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.metrics_url}/readyz", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"evald did not become ready:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def scrape(self) -> str:
        return httpx.get(f"{self.metrics_url}/metrics", timeout=2).text

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()
