"""``evald replay``: score captured OTLP files offline through the same window, mapping and pipeline.

Inputs: binary ``ExportTraceServiceRequest`` (``.pb``), OTLP/JSON (``.json``), ``ExportLogsServiceRequest``
companions (``*.logs.pb`` / ``*.logs.json``), or directories of them (searched recursively). A file that is none
of these is reported and skipped. Configured exporters are not used: scores go to ``--output`` (JSON lines, the
format in docs/replay-format.md) and the summary table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from evald.config.loader import ResolvedConfig
from evald.errors import EvaldError, QueueFullError
from evald.exporters.memory import InMemoryExporter
from evald.judges.registry import close_judges
from evald.model import ScoredCase
from evald.receivers.files import read_signal_file
from evald.service import EvaldService
from evald.summary import Summary, summarize


@dataclass
class ReplayResult:
    scored: list[ScoredCase]
    summary: Summary
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    files_read: int = 0


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".pb", ".json"))
            others = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix not in (".pb", ".json"))
            files.extend(found)
            problems.extend((str(p), "not an OTLP file (.pb or .json)") for p in others)
        elif path.is_file():
            files.append(path)
        else:
            problems.append((str(path), "no such file or directory"))
    return files, problems


async def replay(paths: Sequence[str | Path], config: ResolvedConfig) -> ReplayResult:
    files, skipped = discover(paths)
    memory = InMemoryExporter("replay")
    service = EvaldService(config, with_receivers=False, with_admin=False, configured_exporters=False,
                           extra_exporters=[memory])
    await service.pipeline.start()
    window = service.window
    read = 0
    try:
        for path in files:
            try:
                batch = read_signal_file(path)
            except EvaldError as err:
                skipped.append((str(path), str(err)))
                continue
            except OSError as err:
                skipped.append((str(path), f"cannot read: {err.strerror or err}"))
                continue
            read += 1
            try:
                window.consume(batch)
            except QueueFullError:
                await window.flush(service.pipeline.on_trace)  # release what we hold, then retry
                window.consume(batch)
        await window.flush(service.pipeline.on_trace)
        await service.pipeline.flush_conversations()
        await service.pipeline.drain(timeout=3600)
    finally:
        await service.pipeline.shutdown(timeout=1)
        await close_judges()
    scored = sorted(memory.cases, key=lambda c: (c.case.trace_id, c.case.scope != "trace", c.case.span_id or ""))
    return ReplayResult(scored=scored, summary=summarize(scored), skipped_files=skipped, files_read=read)


def write_jsonl(scored: Iterable[ScoredCase], out: TextIO) -> None:
    for sc in scored:
        out.write(json.dumps(sc.to_json_line(), ensure_ascii=False, default=str) + "\n")


def open_output(target: str) -> TextIO:
    if target == "-":
        return sys.stdout
    return open(target, "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
