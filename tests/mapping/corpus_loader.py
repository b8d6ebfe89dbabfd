"""Test-only corpus helpers: ``.pb`` files -> AssembledTrace, and ground-truth comparison of mapped cases.

The loader reads ExportTraceServiceRequest / ExportLogsServiceRequest with google.protobuf and is deliberately
independent of ``evald.receivers`` so the mapping tests do not depend on the receiver's converter. AnyValue becomes
plain Python (kvlist -> dict, array -> list), ids become lowercase hex. ``map_file`` / ``compare`` produce the
field-by-field checks used by ``test_corpus_genai.py`` and printed by ``tests/corpus_table.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.case import EvalCase
from evald.interfaces import MappingResult
from evald.mapping.router import MapperRouter, default_mappers
from evald.model import AssembledTrace, LogRecord, SpanEvent, SpanRecord

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"


def any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    return getattr(value, kind)


def attributes(kvs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}


def _hex(raw: bytes) -> str | None:
    return raw.hex() if raw else None


def load_spans(path: Path) -> list[SpanRecord]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(path.read_bytes())
    spans: list[SpanRecord] = []
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(SpanRecord(
                    trace_id=s.trace_id.hex(), span_id=s.span_id.hex(), parent_span_id=_hex(s.parent_span_id),
                    name=s.name, kind=s.kind, start_time_unix_nano=s.start_time_unix_nano,
                    end_time_unix_nano=s.end_time_unix_nano, attributes=attributes(s.attributes),
                    events=tuple(SpanEvent(e.name, e.time_unix_nano, attributes(e.attributes)) for e in s.events),
                    status_code=s.status.code, status_message=s.status.message, resource=resource,
                    scope_name=ss.scope.name, scope_version=ss.scope.version,
                ))
    return spans


def load_logs(path: Path) -> list[LogRecord]:
    request = ExportLogsServiceRequest()
    request.ParseFromString(path.read_bytes())
    logs: list[LogRecord] = []
    for rl in request.resource_logs:
        resource = attributes(rl.resource.attributes)
        for sl in rl.scope_logs:
            for r in sl.log_records:
                logs.append(LogRecord(
                    trace_id=r.trace_id.hex(), span_id=_hex(r.span_id), event_name=r.event_name,
                    time_unix_nano=r.time_unix_nano or r.observed_time_unix_nano, attributes=attributes(r.attributes),
                    body=any_value(r.body), severity_number=r.severity_number, resource=resource,
                    scope_name=sl.scope.name,
                ))
    return logs


def load_traces(pb_file: str | Path) -> list[AssembledTrace]:
    """All traces of one corpus file (``<dir>/<scenario>.pb`` plus its ``.logs.pb`` companion when present)."""
    path = Path(pb_file)
    if not path.is_absolute():
        path = CORPUS / path
    spans = load_spans(path)
    logs_path = path.with_name(path.name.removesuffix(".pb") + ".logs.pb")
    logs = load_logs(logs_path) if logs_path.exists() else []
    order: list[str] = []
    for s in spans:
        if s.trace_id not in order:
            order.append(s.trace_id)
    return [
        AssembledTrace(
            trace_id=tid, spans=tuple(s for s in spans if s.trace_id == tid),
            logs=tuple(g for g in logs if g.trace_id == tid),
        )
        for tid in order
    ]


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / "manifest.json").read_text())
    return data


def manifest_files(prefix: str = "") -> list[dict[str, Any]]:
    return [f for f in manifest()["files"] if str(f["instrumentation"]).startswith(prefix)]


# -- ground-truth comparison (shared by test_corpus_genai.py and tests/corpus_table.py) --------------------------

FIELDS = ("evaluable", "input", "output", "model", "request_model", "input_tokens", "output_tokens", "tool_calls",
          "tool_results", "error", "system_prompt", "doc_ids_scores", "doc_content", "llm_calls")


@dataclass(frozen=True)
class Check:
    """One field of one corpus file: ``ok`` is True, False, or None (not applicable); ``partial`` marks an
    accepted near-miss (the trace input equals the whole prompt the app sent, not the user's question)."""

    field: str
    ok: bool | None
    expected: Any = None
    actual: Any = None
    partial: bool = False


@dataclass(frozen=True)
class FileReport:
    entry: dict[str, Any]
    results: list[MappingResult]
    trace_case: EvalCase | None
    llm_calls: list[EvalCase]
    checks: dict[str, Check]


def map_file(entry: dict[str, Any], router: MapperRouter | None = None) -> FileReport:
    """Map every trace of a manifest entry and compare the file's trace case with its ground truth."""
    router = router or MapperRouter(default_mappers())
    results = [router.map(t) for t in load_traces(entry["file"])]
    trace_cases = [c for r in results for c in r.cases if c.scope == "trace"]
    llm_calls = [c for r in results for c in r.cases if c.scope == "llm_call"]
    case = trace_cases[-1] if trace_cases else None  # the final answer comes last when a file holds several traces
    return FileReport(entry, results, case, llm_calls, compare(entry["ground_truth"], case, llm_calls, results))


def api_call_cases(report: FileReport) -> list[tuple[EvalCase, dict[str, Any]]]:
    """Each ``llm_call`` case paired with the chat API call it records, after asserting what every convention reads
    from it exactly: one case per call, the last user message as input, the models, the error, the requested tools."""
    calls = [c for c in report.entry["ground_truth"]["api_calls"] if "chat" in c["api"]]
    assert len(report.llm_calls) == len(calls)
    pairs = list(zip(report.llm_calls, calls, strict=True))
    for case, api in pairs:
        user = [m["content"] for m in api["request_messages"] if m["role"] == "user"]
        assert case.input == user[-1]
        assert case.request_model == api["request_model"]
        assert case.model == api.get("response_model", api["request_model"])
        assert case.error is (api["http_status"] >= 400)
        assert [(t.name, t.arguments, t.id) for t in case.tool_calls] == [
            (t["name"], t["arguments"], t["id"]) for t in api.get("tool_calls", [])]
    return pairs


def _same_json(expected: Any, actual: Any) -> bool:
    if expected == actual:
        return True
    if isinstance(expected, str):
        try:
            return bool(json.loads(expected) == actual)
        except ValueError:
            return False
    return False


def compare(gt: dict[str, Any], case: EvalCase | None, llm_calls: list[EvalCase], results: list[MappingResult]
            ) -> dict[str, Check]:
    checks: dict[str, Check] = {"llm_calls": Check("llm_calls", len(llm_calls) == gt["llm_call_count"],
                                                   gt["llm_call_count"], len(llm_calls))}
    if gt["llm_call_count"] == 0:  # embeddings only: must be reported as not evaluable, with no case
        reasons = sorted({n.reason for r in results for n in r.not_evaluable})
        checks["evaluable"] = Check("evaluable", case is None and reasons == ["no_inference_span"],
                                    ["no_inference_span"], reasons)
        return checks
    checks["evaluable"] = Check("evaluable", case is not None, "trace case", None if case is None else "trace case")
    if case is None:
        return checks

    def add(name: str, expected: Any, actual: Any, ok: bool | None = None, partial: bool = False) -> None:
        checks[name] = Check(name, expected == actual if ok is None else ok, expected, actual, partial)

    sent = gt.get("user_message_sent")
    add("input", gt["user_input"], case.input, case.input == gt["user_input"] or case.input == sent,
        partial=case.input != gt["user_input"] and case.input == sent)
    add("output", gt["final_output"], case.output)
    add("model", gt["response_model"], case.model)
    add("request_model", gt["request_model"], case.request_model)
    for name in ("input_tokens", "output_tokens"):  # a failed call reports no usage: unknown (None) vs 0
        actual, expected = getattr(case, name), gt[name]
        add(name, expected, actual, actual == expected or (actual is None and expected == 0 and gt["error"]))
    add("tool_calls", [(t["name"], t["arguments"], t["id"]) for t in gt["tool_calls"]],
        [(t.name, t.arguments, t.id) for t in case.tool_calls])
    by_id = {t.id: t for t in case.tool_calls}
    results_ok = all(r["call_id"] in by_id and _same_json(r["content"], by_id[r["call_id"]].result)
                     for r in gt["tool_results"])
    add("tool_results", [r["content"] for r in gt["tool_results"]],
        [by_id[r["call_id"]].result if r["call_id"] in by_id else None for r in gt["tool_results"]], results_ok)
    add("error", gt["error"], case.error)
    add("system_prompt", gt["system_prompt"], case.system_prompt)
    docs = gt["retrieved_documents"]
    add("doc_ids_scores", [(d["id"], d["score"]) for d in docs], [(d.id, d.score) for d in case.context],
        None if docs else not case.context)
    add("doc_content", [d["content"] for d in docs], [d.content for d in case.context], None if docs else True)
    return checks
