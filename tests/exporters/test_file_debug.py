"""File exporter (JSON lines, rotation, buffering, shutdown) and debug exporter (a line per score)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Dimension, EvalCase, Score
from evald.exporters.acks import export_ack
from evald.exporters.debug import DebugExporter, DebugExporterConfig
from evald.exporters.file import FileExporter, FileExporterConfig, RotatingWriter
from evald.exporters.kafka import KafkaExporterConfig
from evald.exporters.langfuse import LangfuseExporterConfig
from evald.model import Delivery, ScoredCase
from evald.telemetry import Telemetry


def cases(n: int, start: int = 0, reason: str = "ok") -> list[ScoredCase]:
    return [ScoredCase(EvalCase(trace_id=f"{i:032x}", span_id=f"{i:016x}", scope="trace", service_name="geo",
                                output=f"answer {i}"),
                       (Score("contains", 1.0, 1.0, reason),
                        Score("latency", 0.2, 0.5, dimension=Dimension.PERFORMANCE)),
                       skipped=(("json_valid", "not_applicable"),), metric_dimensions={"json_valid": "correctness"})
            for i in range(start, start + n)]


def lines_of(*paths: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines()]


def count(tm: Telemetry, name: str, exporter: str = "file", **labels: str) -> float:
    return tm.registry.get_sample_value(name, {"exporter": exporter, **labels}) or 0.0


async def test_writes_the_replay_line_format(tmp_path: Path) -> None:
    tm = Telemetry()
    path = tmp_path / "out" / "scores.jsonl"
    exporter = FileExporter(FileExporterConfig(path=str(path), flush_interval=0.05), tm)
    await exporter.start()
    batch = cases(3)
    await exporter.export(batch)
    await asyncio.sleep(0.3)  # the flush interval writes without waiting for shutdown
    assert lines_of(path) == [json.loads(json.dumps(sc.to_json_line(), default=str)) for sc in batch]
    await exporter.shutdown(2)
    assert count(tm, "evald_exporter_sent_scores_total") == 6
    await exporter.shutdown(2)  # idempotent


async def test_rotates_by_size_and_keeps_max_backups(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    line_size = len(json.dumps(cases(1)[0].to_json_line(), default=str)) + 1
    cfg = FileExporterConfig(path=str(path), max_megabytes=(3.5 * line_size) / (1024 * 1024), max_backups=2)
    exporter = FileExporter(cfg, Telemetry())
    await exporter.start()
    for i in range(4):
        await exporter.export(cases(3, start=i * 3))
        await exporter._flush()
    await exporter.shutdown(2)
    files = sorted(p.name for p in await asyncio.to_thread(lambda: list(tmp_path.iterdir())))
    assert files == ["scores.jsonl", "scores.jsonl.1", "scores.jsonl.2"]
    for name in files:
        assert (tmp_path / name).stat().st_size <= 3.5 * line_size
    kept = lines_of(tmp_path / "scores.jsonl.2", tmp_path / "scores.jsonl.1", path)
    ids = [int(line["trace_id"], 16) for line in kept]
    assert ids == list(range(3, 12))  # 3 files x 3 lines: oldest first, the newest lines survive, none out of order


def test_no_backups_means_the_file_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    writer = RotatingWriter(path, max_bytes=10, max_backups=0)
    writer.write([b"123456\n", b"abcdef\n", b"zz\n"])
    writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]
    assert path.read_bytes() == b"abcdef\nzz\n"


async def test_a_full_buffer_drops_and_counts_without_block_on_overflow(tmp_path: Path) -> None:
    tm = Telemetry()
    exporter = FileExporter(FileExporterConfig(path=str(tmp_path / "s.jsonl"), queue_size=3,
                                               block_on_overflow=False), tm)
    assert not exporter.waits_for_room
    await exporter.export(cases(5))
    assert count(tm, "evald_exporter_dropped_scores_total", reason="queue_full") == 4  # 2 cases x 2 scores
    await exporter.start()
    await exporter.shutdown(2)
    assert len(lines_of(tmp_path / "s.jsonl")) == 3


async def test_a_full_buffer_waits_for_the_write_and_the_ack_follows_it(tmp_path: Path) -> None:
    tm = Telemetry()
    exporter = FileExporter(FileExporterConfig(path=str(tmp_path / "s.jsonl"), queue_size=3, flush_interval=60), tm)
    assert exporter.waits_for_room
    delivery = Delivery()
    token = export_ack.set(delivery)
    try:
        blocked = asyncio.create_task(exporter.export(cases(5)))
        await asyncio.sleep(0.2)
        assert not blocked.done()  # 3 buffered, the writer is not running: the pipeline waits
        await exporter.start()  # the writer wakes (a full buffer asks for a write) and makes room
        await asyncio.wait_for(blocked, 5)
    finally:
        export_ack.reset(token)
    delivery.seal()
    assert not delivery.done  # the last 2 cases wait for the next write
    await exporter.shutdown(2)
    assert delivery.done
    assert len(lines_of(tmp_path / "s.jsonl")) == 5
    assert sum(count(tm, "evald_exporter_dropped_scores_total", reason=r)
               for r in ("queue_full", "shutdown")) == 0


async def test_a_failed_write_is_retried_at_the_next_flush(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    exporter = FileExporter(FileExporterConfig(path=str(path), flush_interval=0.05), Telemetry())
    await exporter.start()
    real = exporter._writer.write
    failures = [OSError(28, "No space left on device")]

    def flaky(lines: list[bytes]) -> None:
        if failures:
            raise failures.pop()
        real(lines)

    monkeypatch.setattr(exporter._writer, "write", flaky)
    await exporter.export(cases(2))
    await asyncio.sleep(0.3)
    await exporter.shutdown(2)
    assert len(lines_of(path)) == 2


async def test_an_unopenable_path_fails_at_start(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    exporter = FileExporter(FileExporterConfig(path=str(blocker / "sub" / "s.jsonl")), Telemetry())
    with pytest.raises(OSError):
        await exporter.start()
    await exporter.shutdown(1)


async def test_shutdown_writes_what_is_buffered_and_later_scores_are_counted(tmp_path: Path) -> None:
    tm = Telemetry()
    exporter = FileExporter(FileExporterConfig(path=str(tmp_path / "s.jsonl"), flush_interval=60), tm)
    await exporter.start()
    await exporter.export(cases(4))
    await exporter.shutdown(2)
    assert len(lines_of(tmp_path / "s.jsonl")) == 4
    await exporter.export(cases(1))
    assert count(tm, "evald_exporter_dropped_scores_total", reason="shutdown") == 2


async def test_debug_prints_a_compact_line_per_score() -> None:
    out = io.StringIO()
    exporter = DebugExporter(DebugExporterConfig(), stream=out)
    await exporter.start()
    await exporter.export(cases(1, reason='a "quoted" reason'))
    lines = out.getvalue().splitlines()
    assert lines == [
        f"evald score metric=contains value=1 passed=true scope=trace service=geo trace_id={0:032x} span_id={0:016x}",
        f"evald score metric=latency value=0.2 passed=false scope=trace service=geo trace_id={0:032x}"
        f" span_id={0:016x}",
    ]
    await exporter.shutdown(1)


async def test_debug_detailed_adds_reasons_and_skipped_lines() -> None:
    out = io.StringIO()
    exporter = DebugExporter(DebugExporterConfig(verbosity="detailed"), stream=out)
    await exporter.export(cases(1, reason='a "quoted" reason'))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].endswith('dimension=correctness threshold=1 model=- reason="a \\"quoted\\" reason"')
    assert lines[2].startswith("evald skipped metric=json_valid scope=trace")
    assert lines[2].endswith('reason="not_applicable"')


@pytest.mark.parametrize(("model", "data"), [
    (FileExporterConfig, {"path": "x.jsonl", "flush_interval": "0s"}),
    (LangfuseExporterConfig, {"public_key": "pk", "secret_key": "sk", "timeout": 0}),
    (KafkaExporterConfig, {"timeout": "0ms"}),
])
def test_zero_durations_are_refused(model: Any, data: dict[str, Any]) -> None:
    key = next(k for k in data if k in ("flush_interval", "timeout"))
    with pytest.raises(ValidationError, match=f"{key}\n  Input should be greater than 0"):
        model.model_validate(data)
