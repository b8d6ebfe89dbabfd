"""Test peers for the otlp exporter: a recording OTLP/gRPC sink and a real rotel collector in front of it.

``OTLPSink`` is a grpc.aio server on 127.0.0.1 that answers every metrics/logs Export with success and keeps the
requests. ``Rotel`` runs the OpenTelemetry collector shipped in the ``rotel`` wheel (its ``rotel-agent`` binary, in
the foreground, so the test owns the process) with its OTLP receiver on free 127.0.0.1 ports and its OTLP exporter
pointed at the sink; it is stopped by its own process handle.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import rotel
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric

from tests.integration.daemon import free_port

ROTEL_AGENT = Path(rotel.__file__).parent / "rotel-agent"


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}


class OTLPSink(metrics_service_pb2_grpc.MetricsServiceServicer, logs_service_pb2_grpc.LogsServiceServicer):
    """Records every Export request it receives (metrics and logs)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.metric_requests: list[metrics_service_pb2.ExportMetricsServiceRequest] = []
        self.log_requests: list[logs_service_pb2.ExportLogsServiceRequest] = []
        self._server: grpc.aio.Server | None = None
        #: cleared = every Export waits until it is set again (a stalled collector)
        self.open = asyncio.Event()
        self.open.set()

    async def Export(self, request: Any, context: Any) -> Any:  # noqa: N802  (both services name it Export)
        await self.open.wait()
        if isinstance(request, metrics_service_pb2.ExportMetricsServiceRequest):
            self.metric_requests.append(request)
            return metrics_service_pb2.ExportMetricsServiceResponse()
        self.log_requests.append(request)
        return logs_service_pb2.ExportLogsServiceResponse()

    async def start(self) -> OTLPSink:
        self._server = grpc.aio.server()
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(self, self._server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(self, self._server)
        self._server.add_insecure_port(f"127.0.0.1:{self.port}")
        await self._server.start()
        return self

    async def stop(self) -> None:
        self.open.set()
        if self._server is not None:
            await self._server.stop(grace=0.5)

    # ---- what arrived ------------------------------------------------------------------------------------------

    def log_records(self) -> Iterator[tuple[dict[str, Any], LogRecord]]:
        """(resource attributes, record) for every log record received."""
        for request in self.log_requests:
            for rl in request.resource_logs:
                resource = attrs(rl.resource.attributes)
                for sl in rl.scope_logs:
                    for record in sl.log_records:
                        yield resource, record

    def metrics(self, name: str) -> Iterator[tuple[dict[str, Any], Metric]]:
        """(resource attributes, metric) for every exported metric called ``name``."""
        for request in self.metric_requests:
            for rm in request.resource_metrics:
                resource = attrs(rm.resource.attributes)
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        if metric.name == name:
                            yield resource, metric

    def latest_points(self, name: str) -> list[Any]:
        """The data points of the last export of metric ``name`` (cumulative: it holds the totals)."""
        found = list(self.metrics(name))
        if not found:
            return []
        metric = found[-1][1]
        data = getattr(metric, metric.WhichOneof("data"))
        return list(data.data_points)

    def exemplars(self, name: str, **match: Any) -> list[Any]:
        """Exemplars of every export of metric ``name`` whose point attributes include ``match``.

        The SDK samples exemplars per collection: a later export (e.g. the final one at shutdown) repeats the
        cumulative totals without them.
        """
        out = []
        for _, metric in self.metrics(name):
            for point in getattr(metric, metric.WhichOneof("data")).data_points:
                if match.items() <= attrs(point.attributes).items():
                    out.extend(point.exemplars)
        return out

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 15.0) -> None:
        if not await eventually(predicate, timeout):
            raise AssertionError(
                f"sink: condition not met in {timeout}s ({len(self.metric_requests)} metric and "
                f"{len(self.log_requests)} log requests received)"
            )


async def eventually(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` every 50 ms until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)


class Rotel:
    """A rotel collector: OTLP receiver on free 127.0.0.1 ports, OTLP/gRPC exporter to ``sink_port``."""

    def __init__(self, tmp: Path, sink_port: int) -> None:
        self.grpc_port, self.http_port = free_port(), free_port()
        self.sink_port = sink_port
        self.log_path = tmp / "rotel.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._tmp = tmp

    def start(self, timeout: float = 15.0) -> Rotel:
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                str(ROTEL_AGENT), "start",
                "--otlp-grpc-endpoint", f"127.0.0.1:{self.grpc_port}",
                "--otlp-http-endpoint", f"127.0.0.1:{self.http_port}",
                "--exporter", "otlp",
                "--otlp-exporter-endpoint", f"http://127.0.0.1:{self.sink_port}",
                "--otlp-exporter-protocol", "grpc",
                "--otlp-exporter-compression", "none",
                "--batch-timeout", "50ms",
                "--pid-file", str(self._tmp / "rotel.pid"),
                "--log-file", str(self._tmp / "rotel-agent.log"),
            ],
            stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rotel exited with {self.proc.returncode}:\n{self.log()}")
            if all(_listening(p) for p in (self.grpc_port, self.http_port)):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"rotel did not listen within {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False

