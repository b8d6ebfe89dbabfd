"""``evald replay``: score captured OTLP files offline through the same window, mapping and pipeline.

Inputs: binary ``ExportTraceServiceRequest`` (``.pb``), OTLP/JSON (``.json``), ``ExportLogsServiceRequest``
companions (``*.logs.pb`` / ``*.logs.json``), or directories of them (searched recursively, symlinked directories
not followed). Configured exporters are not used: scores go to ``--output`` (JSON lines, the format in
docs/replay-format.md) and the summary table.

Failures: an input that cannot be used is an error, recorded in ``failed_files`` with why, and the rest is still
processed (the CLI then exits 2): a path that does not exist (or a dangling symlink), a directory that cannot be
listed (at any depth), a file that cannot be read (permissions), and a named file, or a ``.pb``/``.json`` file in a
directory, that is not an OTLP request (corrupt protobuf or JSON, another suffix, no spans or log records). Other
files found in a directory (``README.md``, or a well-formed JSON document that is no OTLP request, such as a
manifest beside the traces) are only noted in ``skipped_files``.

Release: every binary input is read ahead for its trace ids (evald/replay_ahead.py), and each trace is released
(mapped, scored) as soon as the last file holding it has been read, whole, and not retained for late spans; the
window holds only open traces. Traces that OTLP/JSON or unreadable inputs might still hold wait for the end.

Every trace that gave no trace case (not evaluable, or no GenAI span) is kept in ``not_evaluable`` with its
reasons: a ``--output`` row each, and counts by reason in the summary (``attach_counts``).

``no_cases_reason(result)`` says why a replay evaluated 0 cases, from the counts of each stage (``ReplayCounts``:
files, spans, traces, traces without GenAI spans, not-evaluable items by reason, cases, sampled out, dropped).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from prometheus_client import CollectorRegistry

from evald.config.loader import ResolvedConfig
from evald.errors import EvaldError, QueueFullError
from evald.exporters.memory import InMemoryExporter
from evald.interfaces import MappingResult
from evald.judges.registry import close_judges
from evald.model import AssembledTrace, ScoredCase, SignalBatch
from evald.receivers.files import NotOtlpDocumentError, read_signal_file
from evald.replay_ahead import ReadAhead
from evald.service import EvaldService
from evald.summary import Summary, summarize

_OTLP_SUFFIXES = (".pb", ".json")


@dataclass
class ReplayCounts:
    """What each stage saw: files and items read, then the pipeline's own counters."""

    files_read: int = 0
    spans: int = 0
    log_records: int = 0
    traces: int = 0
    no_genai_traces: int = 0
    not_evaluable: Counter[str] = field(default_factory=Counter)
    cases: int = 0
    sampled_out: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    #: spans the window would not take even when empty (a single trace over its memory limit)
    rejected_spans: int = 0


@dataclass
class ReplayResult:
    scored: list[ScoredCase]
    summary: Summary
    #: found in a directory and not an OTLP file by name: noted, not an error
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    files_read: int = 0
    #: inputs that could not be used, with why (the CLI exits 2)
    failed_files: list[tuple[str, str]] = field(default_factory=list)
    counts: ReplayCounts = field(default_factory=ReplayCounts)
    #: one ``--output`` row per trace that gave no trace case, with why (docs/replay-format.md)
    not_evaluable: list[dict[str, object]] = field(default_factory=list)


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: files named on the command line (not found by a directory walk)
    named: set[Path] = field(default_factory=set)


def discover(paths: Iterable[str | Path]) -> Discovery:
    """The files to read under ``paths`` (in order; each directory's sorted), what was skipped, what failed."""
    found = Discovery()
    for raw in paths:
        path = Path(raw)
        try:
            mode = path.stat().st_mode
        except OSError as err:
            found.failed.append((str(path), _missing(path, err)))
            continue
        if stat.S_ISDIR(mode):
            _walk(path, found)
        elif stat.S_ISREG(mode):
            found.files.append(path)
            found.named.add(path)
        else:
            found.failed.append((str(path), "not a regular file or a directory"))
    return found


def _walk(directory: Path, found: Discovery) -> None:
    def unlistable(err: OSError) -> None:
        found.failed.append((str(err.filename or directory), f"cannot list directory: {_reason(err)}"))

    files: list[Path] = []
    for root, dirs, names in os.walk(directory, onerror=unlistable):
        dirs.sort()
        for name in names:
            path = Path(root) / name
            if not name.lower().endswith(_OTLP_SUFFIXES):
                found.skipped.append((str(path), "not an OTLP file (.pb or .json)"))
                continue
            try:
                path.stat()
            except OSError as err:
                found.failed.append((str(path), _missing(path, err)))
                continue
            files.append(path)
    found.files.extend(sorted(files))


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def _missing(path: Path, err: OSError) -> str:
    if isinstance(err, FileNotFoundError) and path.is_symlink():
        return f"dangling symlink (to {os.readlink(path)})"
    return "no such file or directory" if isinstance(err, FileNotFoundError) else f"cannot access: {_reason(err)}"


async def replay(paths: Sequence[str | Path], config: ResolvedConfig, missing: str = "skip") -> ReplayResult:
    """Score ``paths``; the result's summary treats skipped metrics as ``missing`` says (``summarize``)."""
    found = discover(paths)
    files, skipped, failed = found.files, found.skipped, found.failed
    counts = ReplayCounts()
    memory = InMemoryExporter("replay")
    service = EvaldService(config, with_receivers=False, with_admin=False, configured_exporters=False,
                           extra_exporters=[memory], split_judged=False)  # one record per case
    rows: list[dict[str, object]] = []
    service.router.observe(lambda trace, mapped: _record_not_evaluable(trace, mapped, rows))
    await service.pipeline.start()
    window = service.window
    ahead = ReadAhead.of(files)  # each trace is released once the last file holding it has been read
    read = 0
    try:
        for index, path in enumerate(files):
            batch = _read_input(path, found, failed, skipped)
            if batch is not None:
                read += 1
                counts.spans += len(batch.spans)
                counts.log_records += len(batch.logs)
                for part in window.split(batch):  # a file larger than the window goes in parts that fit
                    await _hand_on(service, part, counts)
            await window.release(ahead.done_after(index), service.pipeline.on_trace)
        await window.flush(service.pipeline.on_trace, final=True)  # the last input was read: nothing is late
        await service.pipeline.flush_conversations()
        await service.pipeline.drain(timeout=3600)
    finally:
        await service.pipeline.shutdown(timeout=1)
        await close_judges()
    scored = sorted(memory.cases, key=lambda c: (c.case.trace_id, c.case.scope != "trace", c.case.span_id or ""))
    rows.sort(key=lambda row: str(row["trace_id"]))  # by trace id, as the cases: not in the order of release
    counts.files_read = read
    _count_stages(service.telemetry.registry, counts)
    result = ReplayResult(scored=scored, summary=summarize(scored, missing), skipped_files=skipped, files_read=read,
                          failed_files=failed, counts=counts, not_evaluable=rows)
    attach_counts(result.summary, result)
    return result


def _read_input(path: Path, found: Discovery, failed: list[tuple[str, str]],
                skipped: list[tuple[str, str]]) -> SignalBatch | None:
    """The file's spans and log records, or None with why in ``failed`` (or ``skipped``: see the module doc)."""
    try:
        return read_signal_file(path)
    except NotOtlpDocumentError as err:  # a manifest beside the traces: noted; named, it is an error
        why = str(err).removeprefix(f"{path.name}: ")
        (failed if path in found.named else skipped).append((str(path), why))
    except EvaldError as err:
        failed.append((str(path), str(err).removeprefix(f"{path.name}: ")))
    except OSError as err:
        failed.append((str(path), f"cannot read: {_reason(err)}"))
    return None


def attach_counts(summary: Summary, result: ReplayResult) -> None:
    """Complete a summary of ``result.scored`` with what only the replay knows: traces not evaluated, by reason."""
    not_evaluable = Counter({r: n for r, n in result.counts.not_evaluable.items() if n})
    if result.counts.no_genai_traces:
        not_evaluable["no_genai_spans"] += result.counts.no_genai_traces
    if result.counts.rejected_spans:
        not_evaluable["spans_over_the_window_memory_limit"] += result.counts.rejected_spans
    summary.not_evaluable = dict(not_evaluable.most_common())


def _record_not_evaluable(trace: AssembledTrace, mapped: MappingResult, rows: list[dict[str, object]]) -> None:
    if any(c.scope == "trace" for c in mapped.cases):
        return
    items = [n for n in mapped.not_evaluable if n.scope == "trace"] or list(mapped.not_evaluable)
    service = next((s.service_name for s in trace.spans if s.service_name), None)
    reasons = [{"reason": n.reason, "convention": n.convention, "scope": n.scope, "detail": n.detail,
                "span_id": n.span_id} for n in items] or [{"reason": "no_genai_spans", "convention": None,
                                                           "scope": "trace", "detail": "", "span_id": None}]
    rows.append({"trace_id": trace.trace_id, "span_id": None, "scope": "trace", "service_name": service,
                 "not_evaluable": reasons, "case": None, "scores": [], "skipped": [], "errors": []})


async def _hand_on(service: EvaldService, part: SignalBatch, counts: ReplayCounts) -> None:
    """Give a part to the window; when it is full, release and score what it holds (released traces stay charged
    until their cases are exported) and try again. What the window still rejects is counted, never dropped silently."""
    for _ in range(3):
        try:
            result = service.window.consume(part)
        except QueueFullError:
            await service.window.flush(service.pipeline.on_trace)
            await service.pipeline.drain(timeout=3600)
            continue
        counts.rejected_spans += result.rejected_spans
        return
    counts.rejected_spans += len(part.spans)


def _count_stages(registry: CollectorRegistry, counts: ReplayCounts) -> None:
    for metric in registry.collect():
        for sample in metric.samples:
            if not sample.name.endswith("_total"):
                continue
            value, labels = int(sample.value), sample.labels
            if sample.name == "evald_assembly_released_traces_total":
                counts.traces += value
            elif sample.name == "evald_traces_ignored_total" and labels.get("reason") == "no_genai_spans":
                counts.no_genai_traces += value
            elif sample.name == "evald_cases_not_evaluable_total":
                counts.not_evaluable[labels["reason"]] += value
            elif sample.name == "evald_cases_total":
                counts.cases += value
            elif sample.name == "evald_cases_sampled_out_total":
                counts.sampled_out += value
            elif sample.name == "evald_cases_dropped_total":
                counts.dropped[labels["reason"]] += value


def no_cases_reason(result: ReplayResult) -> str | None:
    """Why nothing was evaluated (None when something was): the first stage that produced nothing."""
    if result.scored:
        return None
    counts = result.counts
    if not counts.files_read:
        failed = f" ({len(result.failed_files)} failed)" if result.failed_files else ""
        return f"no OTLP file was read{failed}"
    reasons = ", ".join(f"{reason} {n}" for reason, n in counts.not_evaluable.most_common())
    if not counts.cases:
        if not counts.spans and not reasons:
            return f"the {_n(counts.files_read, 'file')} held no spans (only {_n(counts.log_records, 'log record')})"
        if not reasons and counts.no_genai_traces >= counts.traces:
            return (f"none of the {_n(counts.traces, 'trace')} has a GenAI span that a mapper recognises "
                    f"(evald_traces_ignored_total{{reason=\"no_genai_spans\"}})")
        return f"every GenAI span or trace was not evaluable ({reasons or 'no reason counted'})"
    noted = f"; also not evaluable: {reasons}" if reasons else ""
    if counts.sampled_out >= counts.cases:
        every = f"all {counts.cases} cases were" if counts.cases > 1 else "the 1 case was"
        return f"{every} sampled out (sampling.ratio){noted}"
    if counts.dropped:
        dropped = ", ".join(f"{reason} {n}" for reason, n in counts.dropped.most_common())
        return f"the {_n(counts.cases, 'case')} were dropped before scoring ({dropped}){noted}"
    return (f"no configured metric applies to the {_n(counts.cases, 'case')} (check each metric's `scope` and "
            f"`filter`){noted}")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def write_jsonl(scored: Iterable[ScoredCase], out: TextIO,
                not_evaluable: Iterable[dict[str, object]] = ()) -> None:
    """The ``--output`` lines: one per scored case, then one per trace that was not evaluated (with why)."""
    for sc in scored:
        out.write(json.dumps(sc.to_json_line(), ensure_ascii=False, default=str) + "\n")
    for row in not_evaluable:
        out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def open_output(target: str) -> TextIO:
    if target == "-":
        return sys.stdout
    return open(target, "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
