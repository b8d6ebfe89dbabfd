"""Replay releases each trace once the last input file holding it has been read (evald/replay_ahead.py): a trace
split over files is scored once and whole however small the window, log companions read before their spans never
make a trace look span-less, and what cannot be read ahead (OTLP/JSON) holds back the traces it might contain."""

from __future__ import annotations

import io
import json
from pathlib import Path

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.config.loader import parse_config
from evald.replay import ReplayResult, replay, write_jsonl
from evald.replay_ahead import ReadAhead
from tests.benchmarks.full_mix import Template, renumbered

EVENT_ONLY = Path(__file__).resolve().parent / "testdata" / "corpus" / "otel-openai-v2.event_only"
COPIES = 12
CONFIG = """
receivers: {{}}
exporters: {{}}
assembly: {{ num_traces: {num_traces} }}
metrics: [{{ kind: error_free, scope: all }}, {{ kind: latency, scope: all, options: {{ max_ms: 60000 }} }},
          {{ kind: contains, scope: trace, options: {{ values: ["weather"] }} }}]
"""


def write_split_copies(directory: Path) -> int:
    """Copies 1..COPIES of the event-only tool-calling capture (four spans; its content in log records; fresh ids
    as the benchmarks make them), copy k's spans split over two trace files: the first half in ``part{k}.pb``, the
    rest in ``part{k+1}.pb``; its log records in ``part{k}.logs.pb``, which sorts (and is read) before
    ``part{k}.pb``. Returns the span count."""
    traces = ExportTraceServiceRequest.FromString((EVENT_ONLY / "c_tool_call.pb").read_bytes())
    logs = ExportLogsServiceRequest.FromString((EVENT_ONLY / "c_tool_call.logs.pb").read_bytes())
    template = Template(EVENT_ONLY.name, "c_tool_call", traces, logs, 4)
    parts = [ExportTraceServiceRequest() for _ in range(COPIES + 2)]
    spans = 0
    for k in range(1, COPIES + 1):
        copy, copy_logs = renumbered(template, k)
        for rs in copy.resource_spans:
            for ss in rs.scope_spans:
                spans += len(ss.spans)
                half = len(ss.spans) // 2
                for target, chosen in ((parts[k], ss.spans[:half]), (parts[k + 1], ss.spans[half:])):
                    out_rs = target.resource_spans.add()
                    out_rs.resource.CopyFrom(rs.resource)
                    out_ss = out_rs.scope_spans.add()
                    out_ss.scope.CopyFrom(ss.scope)
                    out_ss.spans.extend(chosen)
        assert copy_logs is not None
        (directory / f"part{k:02d}.logs.pb").write_bytes(copy_logs.SerializeToString())
    for k in range(1, COPIES + 2):
        (directory / f"part{k:02d}.pb").write_bytes(parts[k].SerializeToString())
    return spans


async def _replay(directory: Path, num_traces: int) -> tuple[ReplayResult, str]:
    result = await replay([directory], parse_config(CONFIG.format(num_traces=num_traces), environ={}))
    out = io.StringIO()
    write_jsonl(result.scored, out, result.not_evaluable)
    return result, out.getvalue()


async def test_a_trace_split_over_files_is_scored_once_and_whole_even_in_a_window_of_three(tmp_path: Path) -> None:
    spans = write_split_copies(tmp_path)
    roomy, roomy_lines = await _replay(tmp_path, 50_000)
    tight, tight_lines = await _replay(tmp_path, 3)
    for result in (roomy, tight):
        assert result.counts.spans == spans and not result.failed_files
        assert result.counts.traces == COPIES  # each released once: no revision, no early release without spans
        assert result.not_evaluable == [] and result.summary.not_evaluable == {}
        trace_cases = [c for c in result.scored if c.case.scope == "trace"]
        assert len(trace_cases) == COPIES and all(c.case.metadata.get("revision") is None for c in trace_cases)
        assert all(c.case.tool_calls and c.case.output for c in trace_cases)  # spans and log content together
    assert tight_lines == roomy_lines  # the window's size changes nothing
    rows = [json.loads(line) for line in tight_lines.splitlines()]
    assert [r["trace_id"] for r in rows] == sorted(r["trace_id"] for r in rows)


def test_read_ahead_releases_after_the_last_file_and_waits_for_what_json_might_hold(tmp_path: Path) -> None:
    write_split_copies(tmp_path)
    files = sorted(tmp_path.iterdir())  # part01.logs.pb, part01.pb, part02.logs.pb, ...
    ahead = ReadAhead.of(files)
    first = files.index(tmp_path / "part02.pb")  # copy 1's second half
    assert min(ahead.finishing) == first  # nothing unreadable ahead: the first trace is done after its last file
    assert len(ahead.done_after(first)) == 1 and ahead.done_after(first) == []  # given once
    assert sum(len(ids) for ids in ahead.finishing.values()) == COPIES - 1
    (tmp_path / "part05.json").write_text("{}")  # OTLP/JSON is not read ahead: it might hold any trace
    files = sorted(tmp_path.iterdir())
    ahead = ReadAhead.of(files)
    unknown = files.index(tmp_path / "part05.json")
    assert min(ahead.finishing) > unknown  # nothing finishing before (or at) it is released early
    # copies 4..12: their last file (part05.pb for copy 4) sorts after part05.json; copies 1..3 wait for the end
    assert sum(len(ids) for ids in ahead.finishing.values()) == COPIES - 3
