"""The receiver write-ahead log (evald/receivers/wal.py, wal_replay.py) with the real OTLP/HTTP receiver and window.

An answer comes only after the request's row is committed; the row goes when the trace's completion is released; a
full log refuses with Retry-After and takes requests again once rows leave; a failed write answers 503 and counts
``not_durable``; rows left by a process (closed without deleting, frozen) are replayed in order into a fresh window
and deleted once done; an undecodable row is deleted and counted; a second process and a corrupt file are handled.
The kill -9 test of ``evald run``: tests/integration/test_daemon_wal.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from evald.assembly.completion import Completion
from evald.assembly.window import AssemblyConfig, TraceWindow
from evald.model import AssembledTrace
from evald.receivers.otlp import OTLPHttpConfig, OTLPReceiverConfig, build_otlp_receivers
from evald.receivers.otlp_http import OTLPHttpReceiver
from evald.receivers.wal import ReceiverWal, ReceiverWalConfig, wal_file
from evald.receivers.wal_replay import replay_wal
from evald.telemetry import Telemetry
from tests.receivers.support import sample, trace_request

PB = {"Content-Type": "application/x-protobuf"}


@dataclass
class Rig:
    """A real window whose sink holds every released trace's completion until the test releases it."""

    directory: Path
    telemetry: Telemetry = field(default_factory=Telemetry)
    held: list[tuple[AssembledTrace, Completion]] = field(default_factory=list)
    window: TraceWindow = field(init=False)

    def __post_init__(self) -> None:
        self.window = TraceWindow(AssemblyConfig(settle=0.05, decision_wait=0.2), self.telemetry)

    async def sink(self, trace: AssembledTrace, completion: Completion) -> None:
        self.held.append((trace, completion))

    def release_all(self) -> None:
        for _, completion in self.held:
            completion.release()
        self.held.clear()

    def wal(self, max_megabytes: int = 16) -> ReceiverWal:
        return ReceiverWal(ReceiverWalConfig(directory=str(self.directory), max_megabytes=max_megabytes), "otlp",
                           self.telemetry)

    def metric(self, name: str, **labels: str) -> float:
        return sample(self.telemetry.registry, name, **labels)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    r = Rig(tmp_path / "wal")
    await r.window.start(r.sink, tick=0.01)
    try:
        yield r
    finally:
        r.window.drop_all("shutdown")
        await r.window.shutdown(r.sink, 0.1)


async def serve(rig: Rig, wal: ReceiverWal) -> OTLPHttpReceiver:
    await wal.open()
    receiver = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), rig.telemetry, wal=wal)
    await receiver.start(rig.window)
    return receiver


async def until(check: object, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end
        await asyncio.sleep(0.01)


def stored(directory: Path) -> list[tuple[int, str, str, bytes]]:
    with contextlib.closing(sqlite3.connect(wal_file(str(directory), "otlp"))) as db:
        return db.execute("SELECT id, signal, encoding, body FROM wal ORDER BY id").fetchall()


async def test_the_answer_waits_for_the_commit_and_the_row_goes_when_the_trace_is_done(rig: Rig) -> None:
    wal = rig.wal()
    receiver = await serve(rig, wal)
    body = trace_request(3, random_ids=True).SerializeToString()
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            response = await client.post(f"http://127.0.0.1:{receiver.bound_port}/v1/traces", content=body,
                                         headers=PB)
            assert response.status_code == 200
            assert wal.rows == 1 and wal.nbytes == len(body)  # committed before the answer
            assert rig.metric("evald_receiver_wal_requests", receiver="otlp") == 1
            await until(lambda: len(rig.held) == 3)  # three traces, one span each
            rig.release_all()
            await until(lambda: wal.rows == 0)
            assert wal.nbytes == 0
    finally:
        await receiver.shutdown(1.0)
        await wal.close()
    assert stored(rig.directory) == []


async def test_a_full_log_refuses_with_retry_after_and_takes_again_once_rows_leave(rig: Rig) -> None:
    wal = rig.wal(max_megabytes=1)
    receiver = await serve(rig, wal)
    big = {"blob": "x" * 600_000}
    first = trace_request(1, random_ids=True, attributes=big).SerializeToString()
    second = trace_request(1, random_ids=True, attributes=big).SerializeToString()
    url = f"http://127.0.0.1:{receiver.bound_port}/v1/traces"
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            assert (await client.post(url, content=first, headers=PB)).status_code == 200
            refused = await client.post(url, content=second, headers=PB)
            assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
            assert rig.metric("evald_receiver_requests_total", receiver="otlp", transport="http",
                              outcome="wal_full") == 1
            assert rig.metric("evald_receiver_refused_spans_total", receiver="otlp", transport="http",
                              reason="wal_full") == 1
            assert wal.rows == 1  # nothing of the refused request was written
            await until(lambda: len(rig.held) == 1)
            rig.release_all()
            await until(lambda: wal.nbytes == 0)
            await asyncio.sleep(0.15)  # past the refusal hold
            assert (await client.post(url, content=second, headers=PB)).status_code == 200
            assert wal.rows == 1
    finally:
        await receiver.shutdown(1.0)
        await wal.close()


async def test_a_failed_write_answers_503_and_counts_not_durable(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    wal = rig.wal()
    receiver = await serve(rig, wal)

    def broken(*_: object) -> int:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(wal, "_commit", broken)
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            response = await client.post(f"http://127.0.0.1:{receiver.bound_port}/v1/traces",
                                         content=trace_request(2, random_ids=True).SerializeToString(), headers=PB)
        assert response.status_code == 503 and "Retry-After" in response.headers
        assert rig.metric("evald_receiver_requests_total", receiver="otlp", transport="http",
                          outcome="not_durable") == 1
        assert rig.metric("evald_receiver_accepted_spans_total", receiver="otlp", transport="http") == 0
        assert wal.rows == 0
    finally:
        await receiver.shutdown(1.0)
        monkeypatch.undo()
        await wal.close()


async def test_rows_left_by_a_process_are_replayed_in_order_and_deleted_once_done(rig: Rig) -> None:
    earlier = rig.wal()
    receiver = await serve(rig, earlier)
    bodies = [trace_request(2, random_ids=True).SerializeToString() for _ in range(5)]
    async with httpx.AsyncClient(timeout=5) as client:
        for body in bodies:
            url = f"http://127.0.0.1:{receiver.bound_port}/v1/traces"
            assert (await client.post(url, content=body, headers=PB)).status_code == 200
    await receiver.shutdown(1.0)
    earlier.freeze()  # as at the end of a shutdown drain: nothing more is deleted
    await until(lambda: len(rig.held) == 10)
    rig.release_all()
    await earlier.close()
    assert [row[3] for row in stored(rig.directory)] == bodies

    fresh = Rig(rig.directory)  # the next process: a new window and registry
    await fresh.window.start(fresh.sink, tick=0.01)
    later = fresh.wal()
    try:
        await later.open()
        assert later.rows == 5
        assert await replay_wal(later, fresh.window) == 5
        assert fresh.metric("evald_receiver_wal_replayed_requests_total", receiver="otlp") == 5
        await until(lambda: len(fresh.held) == 10)
        expected = {s.trace_id.hex() for b in bodies for s in _spans(b)}
        assert {t.trace_id for t, _ in fresh.held} == expected
        fresh.release_all()
        await until(lambda: later.rows == 0)
    finally:
        await later.close()
        await fresh.window.shutdown(fresh.sink, 0.1)
    assert stored(rig.directory) == []


async def test_grpc_from_the_sdk_and_otlp_json_are_logged_as_received_and_replayed(rig: Rig) -> None:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from evald.receivers.otlp import OTLPGrpcConfig
    from evald.receivers.otlp_grpc import OTLPGrpcReceiver

    earlier = rig.wal()
    await earlier.open()
    grpc = OTLPGrpcReceiver(OTLPGrpcConfig(endpoint="127.0.0.1:0"), rig.telemetry, wal=earlier)
    http = OTLPHttpReceiver(OTLPHttpConfig(endpoint="127.0.0.1:0"), rig.telemetry, wal=earlier)
    await grpc.start(rig.window)
    await http.start(rig.window)

    def send_with_sdk() -> str:
        provider = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{grpc.bound_port}", insecure=True)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        with provider.get_tracer("t").start_as_current_span("chat") as span:
            trace_id = f"{span.get_span_context().trace_id:032x}"
        provider.shutdown()
        return trace_id

    json_trace = "5b8efff798038103d269b633813fc60c"
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": json_trace, "spanId": "eee19b7ec3c1b174", "name": "chat", "kind": 3}]}]}]}).encode()
    try:
        sdk_trace = await asyncio.to_thread(send_with_sdk)
        async with httpx.AsyncClient(timeout=5) as client:
            response = await client.post(f"http://127.0.0.1:{http.bound_port}/v1/traces", content=body,
                                         headers={"Content-Type": "application/json"})
            assert response.status_code == 200
        assert earlier.rows == 2
    finally:
        await grpc.shutdown(1.0)
        await http.shutdown(1.0)
        earlier.freeze()
        await earlier.close()
    assert [(signal, encoding) for _, signal, encoding, _ in stored(rig.directory)] == [
        ("traces", "protobuf"), ("traces", "json")]
    assert stored(rig.directory)[1][3] == body  # as received

    fresh = Rig(rig.directory)
    await fresh.window.start(fresh.sink, tick=0.01)
    later = fresh.wal()
    try:
        await later.open()
        assert await replay_wal(later, fresh.window) == 2
        await until(lambda: len(fresh.held) == 2)
        assert {t.trace_id for t, _ in fresh.held} == {sdk_trace, json_trace}
        fresh.release_all()
        await until(lambda: later.rows == 0)
    finally:
        await later.close()
        await fresh.window.shutdown(fresh.sink, 0.1)


async def test_an_undecodable_row_is_deleted_and_counted(rig: Rig) -> None:
    wal = rig.wal()
    await wal.open()
    entry = wal.admit(5)
    await wal.append(entry, "traces", "protobuf", b"\xff\xff\xff\xff\xff")  # no delivery held: sealed, deleted
    await until(lambda: wal.rows == 0)
    entry = wal.admit(5)
    entry.delivery.hold()  # held as the window would: the row stays
    await wal.append(entry, "traces", "protobuf", b"\xff\xff\xff\xff\xff")
    await wal.close()
    again = rig.wal()
    try:
        await again.open()
        assert again.rows == 1
        assert await replay_wal(again, rig.window) == 0
        assert rig.metric("evald_receiver_wal_dropped_requests_total", receiver="otlp", reason="undecodable") == 1
        await until(lambda: again.rows == 0)
    finally:
        await again.close()


async def test_a_second_process_is_refused_and_a_corrupt_file_is_moved_aside(rig: Rig) -> None:
    first = rig.wal()
    await first.open()
    second = rig.wal()
    with pytest.raises(OSError, match="receiver otlp: wal: cannot open .*another evald"):
        await second.open()
    await second.close()
    await first.close()
    wal_file(str(rig.directory), "otlp").write_bytes(b"not a database" * 100)
    third = rig.wal()
    try:
        await third.open()
        assert third.rows == 0
    finally:
        await third.close()
    assert len(list(rig.directory.glob("otlp.wal.sqlite.corrupt-*"))) == 1


async def test_replay_reads_chunks_bounded_by_bytes_and_a_large_row_alone(rig: Rig) -> None:
    wal = rig.wal()
    await wal.open()
    for size in (100_000, 100_000, 100_000, 400_000, 100_000):
        entry = wal.admit(size)
        entry.delivery.hold()  # held as the window would: the rows stay
        await wal.append(entry, "traces", "protobuf", bytes(size))
    await wal.close()
    again = rig.wal()
    try:
        await again.open()
        assert again.mark_replay() == 5
        sizes, after = [], 0
        while rows := await again.read(after, 64, max_bytes=250_000):
            sizes.append([len(body) for _, _, _, body in rows])
            after = rows[-1][0]
        assert sizes == [[100_000, 100_000], [100_000], [400_000], [100_000]]
    finally:
        await again.close()


async def test_after_close_a_completed_delivery_leaves_its_row(rig: Rig) -> None:
    wal = rig.wal()
    await wal.open()
    entry = wal.admit(3)
    entry.delivery.hold()
    await wal.append(entry, "traces", "protobuf", b"abc")
    await wal.close()
    entry.delivery.release()  # e.g. an exporter finishing after the service closed the log: nothing is written
    assert len(stored(rig.directory)) == 1


def test_the_ingest_role_does_not_use_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from evald.config.loader import parse_config
    from evald.ingest.roles import IngestService

    config = parse_config(f"receivers: {{ otlp: {{ wal: {{ directory: \"{tmp_path}\" }} }} }}\n"
                          "ingest: { brokers: [\"127.0.0.1:1\"] }\n")
    service = IngestService(config, with_admin=False)
    assert [getattr(r, "wal") for r in service.receivers] == [None, None]  # noqa: B009
    assert "role ingest: otlp/grpc: `wal` is not used" in caplog.text


def test_both_transports_share_one_log(tmp_path: Path) -> None:
    config = OTLPReceiverConfig.model_validate({
        "grpc": {"endpoint": "127.0.0.1:0"}, "http": {"endpoint": "127.0.0.1:0"},
        "wal": {"directory": str(tmp_path)}})
    grpc, http = build_otlp_receivers(config, Telemetry())
    assert getattr(grpc, "wal") is getattr(http, "wal") is not None  # noqa: B009
    assert getattr(grpc, "wal").path == tmp_path / "otlp.wal.sqlite"  # noqa: B009
    assert OTLPReceiverConfig().wal is None  # opt-in


def _spans(body: bytes) -> list[object]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest.FromString(body)
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
