"""The full mix of conventions for the benchmarks: every trace file of tests/testdata/corpus and
tests/testdata/captured (each configuration's ``*.pb``, with its ``*.logs.pb`` companion where there is one),
replicated with fresh trace and span ids.

A copy ``k`` of a template XORs every trace id with ``k`` (in its last 8 bytes, so distinct traces of one file stay
distinct) and every span and parent span id with ``k``; log records' trace and span ids are renumbered the same
way, so a companion still joins its trace. ``templates()`` are read once and never modified.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (ROOT / "tests" / "testdata" / "corpus", ROOT / "tests" / "testdata" / "captured")


@dataclass(frozen=True)
class Template:
    configuration: str  # the capture's directory name, e.g. "openinference-langchain"
    scenario: str  # the file's stem, e.g. "c_tool_call"
    traces: trace_service_pb2.ExportTraceServiceRequest
    logs: logs_service_pb2.ExportLogsServiceRequest | None
    spans: int


@functools.lru_cache(maxsize=4)
def templates(openai_v2_only: bool = False) -> tuple[Template, ...]:
    """Every trace file of the corpus and the captures (sorted by configuration, then scenario)."""
    out: list[Template] = []
    for source in SOURCES:
        for directory in sorted(p for p in source.iterdir() if p.is_dir()):
            if openai_v2_only and directory.name != "otel-openai-v2.span_only":
                continue
            for path in sorted(directory.glob("*.pb")):
                if path.name.endswith(".logs.pb"):
                    continue
                traces = trace_service_pb2.ExportTraceServiceRequest.FromString(path.read_bytes())
                companion = path.with_name(path.stem + ".logs.pb")
                logs = (logs_service_pb2.ExportLogsServiceRequest.FromString(companion.read_bytes())
                        if companion.exists() else None)
                spans = sum(len(ss.spans) for rs in traces.resource_spans for ss in rs.scope_spans)
                if spans:
                    out.append(Template(directory.name, path.stem, traces, logs, spans))
    return tuple(out)


def _xor_id(raw: bytes, k: int) -> bytes:
    if not raw:
        return raw
    return (int.from_bytes(raw, "big") ^ k).to_bytes(len(raw), "big")


def renumbered(template: Template, k: int) -> tuple[trace_service_pb2.ExportTraceServiceRequest,
                                                    logs_service_pb2.ExportLogsServiceRequest | None]:
    """Copy ``k`` of ``template`` (k >= 1): fresh trace, span and parent ids; the companion's ids follow."""
    traces = trace_service_pb2.ExportTraceServiceRequest()
    traces.CopyFrom(template.traces)
    for rs in traces.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                span.trace_id = _xor_id(span.trace_id, k)
                span.span_id = _xor_id(span.span_id, k)
                span.parent_span_id = _xor_id(span.parent_span_id, k)
                for link in span.links:
                    link.trace_id = _xor_id(link.trace_id, k)
                    link.span_id = _xor_id(link.span_id, k)
    logs = None
    if template.logs is not None:
        logs = logs_service_pb2.ExportLogsServiceRequest()
        logs.CopyFrom(template.logs)
        for rl in logs.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    record.trace_id = _xor_id(record.trace_id, k)
                    record.span_id = _xor_id(record.span_id, k)
    return traces, logs


def replicated(total_spans: int, openai_v2_only: bool = False) -> Iterator[tuple[Template, int]]:
    """(template, copy number) in turn through every template until ``total_spans`` spans were handed out."""
    sources = templates(openai_v2_only)
    spans = 0
    k = 0
    while spans < total_spans:
        k += 1
        for template in sources:
            yield template, k
            spans += template.spans
            if spans >= total_spans:
                return


def build_requests(total_spans: int, traces_per_request: int = 100, openai_v2_only: bool = False,
                   ) -> tuple[list[bytes], list[bytes], int, int]:
    """Serialized (trace requests, log requests, spans, trace files) of the replicated mix; a request joins
    ``traces_per_request`` template copies, and log request ``i`` holds the companions of trace request ``i``
    (``b""`` when none of its copies has one)."""
    trace_out: list[bytes] = []
    log_out: list[bytes] = []
    request = trace_service_pb2.ExportTraceServiceRequest()
    logs = logs_service_pb2.ExportLogsServiceRequest()
    spans = files = in_request = 0
    for template, k in replicated(total_spans, openai_v2_only):
        copy, copy_logs = renumbered(template, k)
        request.resource_spans.extend(copy.resource_spans)
        if copy_logs is not None:
            logs.resource_logs.extend(copy_logs.resource_logs)
        spans += template.spans
        files += 1
        in_request += 1
        if in_request == traces_per_request:
            trace_out.append(request.SerializeToString())
            log_out.append(logs.SerializeToString() if logs.resource_logs else b"")
            request = trace_service_pb2.ExportTraceServiceRequest()
            logs = logs_service_pb2.ExportLogsServiceRequest()
            in_request = 0
    if in_request:
        trace_out.append(request.SerializeToString())
        log_out.append(logs.SerializeToString() if logs.resource_logs else b"")
    return trace_out, log_out, spans, files


def write_directory(directory: Path, total_spans: int, traces_per_file: int = 100) -> tuple[int, int]:
    """The replicated mix as ``.pb`` files (and ``.logs.pb`` companions) in ``directory``: (spans, files written)."""
    traces, logs, spans, _ = build_requests(total_spans, traces_per_file)
    directory.mkdir(parents=True, exist_ok=True)
    for i, body in enumerate(traces):
        (directory / f"mix{i:05d}.pb").write_bytes(body)
    for i, body in enumerate(logs):
        if body:
            (directory / f"mix{i:05d}.logs.pb").write_bytes(body)
    return spans, len(traces)
