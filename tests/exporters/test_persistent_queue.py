"""The persistent sending queue (sending_queue.storage): what is queued survives the process.

Unit level: a queue closed with items left hands them to the next queue on the same directory, in order; the byte
bound makes ``put`` wait; a corrupt file is moved aside; a second process cannot open the same file. End to end:
``evald run`` with Langfuse down is killed with SIGKILL, the queue file holds every score, and a restarted evald
with Langfuse up delivers each one exactly as counted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from evald.exporters.persistent_queue import queue_file
from evald.exporters.sending import SendingQueue
from evald.exporters.sending_policy import QueueStorageConfig, RetryableError, RetryOnFailureConfig, SendingQueueConfig
from evald.telemetry import Telemetry
from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, sdk_validate
from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import send_chat_trace

ID = "langfuse/disk"


def rows(directory: Path, exporter_id: str = ID) -> int:
    """Items in a queue file nobody holds open."""
    db = sqlite3.connect(queue_file(str(directory), exporter_id))
    try:
        return int(db.execute("SELECT count(*) FROM queue").fetchone()[0])
    finally:
        db.close()


def make(tmp: Path, send: object, *, max_megabytes: float = 1.0, queue_size: int = 1000) -> SendingQueue[bytes]:
    storage = QueueStorageConfig(directory=str(tmp / "q"), max_megabytes=max_megabytes)
    return SendingQueue(ID, send, Telemetry(),  # type: ignore[arg-type]
                        queue=SendingQueueConfig(queue_size=queue_size, num_consumers=2, storage=storage),
                        retry=RetryOnFailureConfig(initial_interval=0.01, max_interval=0.05, max_elapsed_time=0),
                        timeout=1.0, batch_size=7, codec=(bytes, bytes))


async def test_items_left_at_shutdown_are_sent_by_the_next_queue_in_order(tmp_path: Path) -> None:
    async def down(batch: list[bytes]) -> None:
        raise RetryableError("down")

    first = make(tmp_path, down)
    await first.start()
    items = [f"item-{i:03d}".encode() for i in range(40)]
    assert await first.put(items) == 40
    await asyncio.sleep(0.1)  # consumers hold two batches in flight, retrying
    await first.shutdown(0.2)
    assert rows(tmp_path / "q") == 40

    delivered: list[bytes] = []

    async def up(batch: list[bytes]) -> None:
        delivered.extend(batch)

    second = make(tmp_path, up)
    await second.start()
    assert await second.drain(5)
    await second.shutdown(1)
    assert sorted(delivered) == items and len(delivered) == 40
    assert rows(tmp_path / "q") == 0


async def test_the_byte_bound_makes_put_wait_until_items_are_sent(tmp_path: Path) -> None:
    gate = asyncio.Event()
    delivered: list[bytes] = []

    async def send(batch: list[bytes]) -> None:
        await gate.wait()
        delivered.extend(batch)

    q = make(tmp_path, send, max_megabytes=10_000 / 1024 / 1024)  # 10,000 bytes
    await q.start()
    items = [bytes([65 + i % 26]) * 1000 for i in range(25)]  # 25,000 bytes
    put = asyncio.create_task(q.put(items))
    await asyncio.sleep(0.3)
    assert not put.done() and q.pending == 10  # 10 items fill the 10,000 bytes, in flight included
    gate.set()
    assert await asyncio.wait_for(put, 5) == 25
    assert await q.drain(5)
    await q.shutdown(1)
    assert delivered == items


async def test_a_corrupt_file_is_moved_aside_and_a_second_process_is_refused(tmp_path: Path) -> None:
    path = queue_file(str(tmp_path / "q"), ID)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)

    async def send(batch: list[bytes]) -> None:
        return None

    q = make(tmp_path, send)
    await q.start()
    assert await q.put([b"x"]) == 1
    assert await q.drain(5)
    assert [p.name for p in path.parent.iterdir() if ".corrupt-" in p.name]
    other = make(tmp_path, send)
    with pytest.raises(OSError, match="is another evald using this directory"):  # locking_mode=EXCLUSIVE
        await other.start()
    unwritable = SendingQueue(ID, send, Telemetry(), retry=RetryOnFailureConfig(), timeout=1, codec=(bytes, bytes),
                              queue=SendingQueueConfig(storage=QueueStorageConfig(directory="/proc/evald-queue")))
    with pytest.raises(OSError, match="langfuse/disk: sending_queue.storage: cannot open /proc/evald-queue/"):
        await unwritable.start()
    await q.shutdown(1)


async def test_a_failing_disk_makes_put_wait_and_retry_instead_of_losing(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    delivered: list[bytes] = []

    async def send(batch: list[bytes]) -> None:
        delivered.extend(batch)

    q = make(tmp_path, send)
    await q.start()
    buffer = q._buffer
    real = buffer.add
    failures = [OSError(28, "No space left on device")] * 2

    async def flaky(entries: object) -> None:
        if failures:
            raise failures.pop()
        await real(entries)  # type: ignore[arg-type]

    monkeypatch.setattr(buffer, "add", flaky)
    started = time.monotonic()
    assert await q.put([b"a", b"b", b"c"]) == 3  # written on the third attempt, a second apart
    assert 1.8 < time.monotonic() - started < 4
    assert await q.drain(5)
    await q.shutdown(1)
    assert delivered == [b"a", b"b", b"c"]


def config(server: FakeLangfuse, directory: Path) -> str:
    return f"""  langfuse/disk:
    host: "{server.url}"
    public_key: "{PUBLIC_KEY}"
    secret_key: "{SECRET_KEY}"
    rate_limit_per_minute: 0
    batch_size: 5
    timeout: 1s
    retry_on_failure: {{ initial_interval: 100ms, max_interval: 300ms, max_elapsed_time: 0 }}
    sending_queue: {{ num_consumers: 2, storage: {{ directory: "{directory}" }} }}
assembly: {{ settle: 100ms, decision_wait: 5s }}
metrics:
  - kind: error_free
    scope: all
  - kind: contains
    scope: trace
    options: {{ values: ["Paris"] }}
pipeline: {{ workers: 2 }}
"""


def scored_cases(daemon: Daemon) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in daemon.scrape().splitlines()
               if line.startswith("evald_scored_cases_total{"))


async def test_sigkill_with_langfuse_down_then_restart_delivers_every_queued_score(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    server = await FakeLangfuse().start()
    await server.stop()  # down: evald can only queue
    queue_dir = tmp_path / "queue"
    first = Daemon(tmp_path, config(server, queue_dir))
    traces = 10  # 3 scores each: error_free on the trace and on the chat call, contains on the trace
    try:
        await asyncio.to_thread(first.start)
        url = f"http://127.0.0.1:{first.http_port}/v1/traces"
        trace_ids = [await asyncio.to_thread(send_chat_trace, OTLPSpanExporter(endpoint=url), "geo",
                                             "Paris." if i % 2 else "Lyon.") for i in range(traces)]
        end = time.monotonic() + 15
        while await asyncio.to_thread(scored_cases, first) < 2 * traces:
            assert time.monotonic() < end, first.log()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # the last worker batch reaches the disk
        assert first.proc is not None
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(5)
    finally:
        await asyncio.to_thread(first.stop)
    queued = rows(queue_dir, "langfuse/disk")
    assert queued == 3 * traces  # every score was on disk when the process died

    await server.start()
    (tmp_path / "again").mkdir()
    second = Daemon(tmp_path / "again", config(server, queue_dir))
    try:
        await asyncio.to_thread(second.start)
        end = time.monotonic() + 15
        while len(set(server.accepted_ids())) < queued:
            assert time.monotonic() < end, second.log()
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        rc = await asyncio.to_thread(second.stop)
    finally:
        await asyncio.to_thread(second.stop)
        await server.stop()
    assert rc == 0, second.log()
    assert len(set(server.accepted_ids())) == queued == 3 * traces
    assert {s["traceId"] for s in server.accepted} == set(trace_ids)
    for request in server.requests:
        sdk_validate(request.body)
