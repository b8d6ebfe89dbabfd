"""Test-only helpers for ``tests/testdata/captured``: traces captured from instrumentations the shared corpus lacks.

``expected_fields`` is a manifest entry's ground truth (what the app and the API stand-in did), with the entry's
``emitter`` overrides applied: fields an emitter records differently or not at all, each with the reason, so the
test asserts what evald can read from the spans and nothing is silently excused. ``actual_fields`` maps a file with
the default router. Both return the same keys; ``python -m tests.mapping.captured_loader`` prints every mismatch.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

from evald.mapping.router import MapperRouter, default_mappers

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus_loader import load_traces
else:
    from tests.mapping.corpus_loader import load_traces

CAPTURED = Path(__file__).resolve().parents[1] / "testdata" / "captured"


def manifest_files() -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = json.loads((CAPTURED / "manifest.json").read_text())["files"]
    return files


def _json(value: Any) -> Any:
    """JSON text (or a Python literal: LlamaIndex sends tool results back as ``str(dict)``) as its value."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            pass
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def expected_fields(entry: dict[str, Any]) -> dict[str, Any]:
    gt = entry["ground_truth"]
    fields: dict[str, Any] = {
        "llm_calls": gt["llm_call_count"],
        "evaluable": True if gt["llm_call_count"] else "no_inference_span",
    }
    if gt["llm_call_count"]:
        fields.update({
            "input": gt["user_input"], "output": gt["final_output"] or None, "model": gt["response_model"],
            "request_model": gt["request_model"], "input_tokens": gt["input_tokens"],
            "output_tokens": gt["output_tokens"], "error": bool(gt["error"]), "system_prompt": gt["system_prompt"],
            "tool_calls": [[t["name"], _json(t["arguments"]), t.get("id")] for t in gt.get("tool_calls") or []],
            "tool_results": [_json(r["content"]) for r in gt.get("tool_results") or []],
            "documents": [[d.get("id"), d.get("content")] for d in gt.get("retrieved_documents") or []],
        })
        if gt["error"] and not gt["input_tokens"] and not gt["output_tokens"]:
            fields["input_tokens"] = fields["output_tokens"] = None  # a failed call reports no usage: unknown
    for name, override in entry.get("emitter", {}).items():
        fields[name] = override["value"]
    if fields["evaluable"] is not True:  # not evaluable: only the reason and the calls are compared
        fields = {k: fields[k] for k in ("llm_calls", "evaluable")}
    return fields


def actual_fields(entry: dict[str, Any], expected: dict[str, Any], router: MapperRouter | None = None
                  ) -> dict[str, Any]:
    router = router or MapperRouter(default_mappers())
    results = [router.map(t) for t in load_traces(CAPTURED / entry["file"])]
    trace_cases = [c for r in results for c in r.cases if c.scope == "trace"]
    fields: dict[str, Any] = {"llm_calls": sum(c.scope == "llm_call" for r in results for c in r.cases)}
    if expected["evaluable"] is not True:
        reasons = sorted({n.reason for r in results for n in r.not_evaluable if n.scope == "trace"})
        if not trace_cases and not any(r.cases or r.not_evaluable for r in results):
            reasons = ["no_genai_spans"]  # no mapper claimed the trace: the pipeline counts it as ignored
        fields["evaluable"] = reasons[0] if len(reasons) == 1 and not trace_cases else reasons or True
        return fields
    if not trace_cases:
        fields["evaluable"] = sorted({n.reason for r in results for n in r.not_evaluable})
        return fields
    case = trace_cases[-1]  # a file of several traces: the one with the final answer comes last
    sent = entry["ground_truth"].get("user_message_sent")
    fields.update({
        "evaluable": True, "input": expected["input"] if case.input == sent else case.input,
        "output": case.output or None, "model": case.model, "request_model": case.request_model,
        "input_tokens": case.input_tokens, "output_tokens": case.output_tokens, "error": case.error,
        "system_prompt": case.system_prompt,
        "tool_calls": [[t.name, _json(t.arguments), t.id] for t in case.tool_calls],
        "tool_results": [_json(t.result) for t in case.tool_calls],
        "documents": [[d.id, d.content] for d in case.context],
    })
    return fields


def mismatches(entry: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    expected = expected_fields(entry)
    actual = actual_fields(entry, expected)
    return {k: (v, actual.get(k)) for k, v in expected.items() if actual.get(k) != v}


def main() -> int:
    bad = 0
    for entry in manifest_files():
        diff = mismatches(entry)
        bad += bool(diff)
        print(f"{entry['file']}: {'ok' if not diff else 'MISMATCH'}")
        for name, (want, got) in diff.items():
            print(f"    {name}: expected {want!r}\n    {' ' * len(name)}  got      {got!r}")
    print(f"{bad} of {len(manifest_files())} files with mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
