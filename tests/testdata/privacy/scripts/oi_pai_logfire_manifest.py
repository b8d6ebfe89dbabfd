"""Write <configuration>/capture.json for the captures made with oi_pai_logfire_standin.py (issue 15).

usage: <the configuration's venv>/bin/python oi_pai_logfire_manifest.py <privacy_dir> specs/<configuration>.json
(run with the venv the capture ran in: the package versions are read from it)
The `recorded` judgements come from reading the decoded spans (see RECORDED); the masking markers and the attribute
keys carrying them, the scope names and the package versions are read from the files / the venv, not typed in.
"""

import json
import os
import re
import sys
from importlib import metadata

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

MARKER_RE = re.compile(r"__REDACTED__|\[Scrubbed due to '[^']*'\]|<elided>|\[REDACTED\]")
SYSTEM = "You are a concise assistant. Answer in one sentence."
TOOL_SYSTEM = "You are a helpful assistant. Use the available tools when they help."
PARIS = "The capital of France is Paris."
SECRET_Q = "My password is hunter2, what is the capital of France?"
SECRET_A = "The capital of France is Paris; never share your password, and keep your api_key secret too."


def ground_truth(scenario: str, provider: str, secret: bool) -> dict:
    req, resp = ("gpt-4o-mini", "gpt-4o-mini-2024-07-18") if provider == "openai" else (
        "claude-3-5-haiku-20241022", "claude-3-5-haiku-20241022")
    stop, tool_stop = ("stop", "tool_calls") if provider == "openai" else ("end_turn", "tool_use")
    chat = {"user_input": SECRET_Q if secret else "What is the capital of France?", "system_prompt": SYSTEM,
            "final_output": SECRET_A if secret else PARIS, "request_model": req, "response_model": resp,
            "llm_call_count": 1, "input_tokens": 31 if secret else 26, "output_tokens": 22 if secret else 7,
            "tool_calls": [], "error": False, "finish_reason": stop}
    if scenario in ("a_chat_correct", "h_streaming_chat"):
        return chat
    if scenario == "c_tool_call":
        return {"user_input": "What's the weather in Paris right now?", "system_prompt": TOOL_SYSTEM,
                "final_output": "It is 18C and sunny in Paris.", "request_model": req, "response_model": resp,
                "llm_call_count": 2, "input_tokens": 82 + 118, "output_tokens": 17 + 12, "tool_calls": ["get_weather"],
                "tool_arguments": [{"city": "Paris"}], "tool_results": ["18C and sunny"], "error": False,
                "finish_reason": stop, "first_call_finish_reason": tool_stop}
    if scenario == "f_error":
        return {"user_input": "What is the status of order #12345?", "system_prompt": SYSTEM, "final_output": None,
                "request_model": req, "response_model": None, "llm_call_count": 1, "input_tokens": 0,
                "output_tokens": 0, "tool_calls": [], "error": True, "finish_reason": None,
                "error_detail": "stand-in answered HTTP 500 with a JSON error body; the client (max_retries=0) raised "
                                "and the app caught it"}
    raise ValueError(scenario)


def _strings(value, path):
    kind = value.WhichOneof("value")
    if kind == "string_value":
        yield path, value.string_value
    elif kind == "array_value":
        for v in value.array_value.values:
            yield from _strings(v, path)
    elif kind == "kvlist_value":
        for kv in value.kvlist_value.values:
            yield from _strings(kv.value, f"{path}.{kv.key}")


def has_error_status(path: str) -> bool:
    req = ExportTraceServiceRequest()
    with open(path, "rb") as fh:
        req.ParseFromString(fh.read())
    return any(sp.status.code == 2 for rs in req.resource_spans for ss in rs.scope_spans for sp in ss.spans)


def scan(path: str) -> tuple[set, dict]:
    """(scope names, {marker: sorted attribute keys}) of one .pb / .logs.pb file."""
    scopes, markers = set(), {}
    with open(path, "rb") as fh:
        data = fh.read()

    def note(where, text):
        for m in MARKER_RE.findall(text):
            markers.setdefault(m, set()).add(where)

    if path.endswith(".logs.pb"):
        req = ExportLogsServiceRequest()
        req.ParseFromString(data)
        for rl in req.resource_logs:
            for sl in rl.scope_logs:
                scopes.add(sl.scope.name)
                for lr in sl.log_records:
                    for k, s in _strings(lr.body, "log.body"):
                        note(k, s)
                    for a in lr.attributes:
                        for k, s in _strings(a.value, f"log.attributes.{a.key}"):
                            note(k, s)
    else:
        req = ExportTraceServiceRequest()
        req.ParseFromString(data)
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                scopes.add(ss.scope.name)
                for sp in ss.spans:
                    for a in sp.attributes:
                        for k, s in _strings(a.value, a.key):
                            note(k, s)
                    for ev in sp.events:
                        for a in ev.attributes:
                            for k, s in _strings(a.value, f"event[{ev.name}].{a.key}"):
                                note(k, s)
                    if sp.status.message:
                        note("status.message", sp.status.message)
    return scopes, {m: sorted(k) for m, k in markers.items()}


def build(privacy_dir: str, spec: dict) -> dict:
    conf = spec["configuration"]
    d = os.path.join(privacy_dir, conf)
    all_scopes, all_markers, files = set(), {}, []
    for scenario, rec in spec["recorded"].items():
        entry = {"file": f"{scenario}.pb", "scenario": scenario,
                 "ground_truth": {**ground_truth(scenario, spec["provider"], spec.get("secret", False)),
                                  **spec.get("ground_truth_overrides", {}).get(scenario, {})}}
        fmarkers = {}
        for name in (f"{scenario}.pb", f"{scenario}.logs.pb"):
            p = os.path.join(d, name)
            if not os.path.exists(p):
                continue
            if name.endswith(".logs.pb"):
                entry["logs_file"] = name
            scopes, markers = scan(p)
            all_scopes |= scopes
            for m, keys in markers.items():
                fmarkers.setdefault(m, []).extend(keys)
                all_markers.setdefault(m, set()).update(keys)
        # the shared vocabulary: a field the scenario has no use for (tools in a plain chat) is "absent";
        # error_status is "present" only where a span carries status ERROR (read from the file)
        entry["recorded"] = {k: ("absent" if v == "n/a" else v) for k, v in rec.items() if k != "notes"}
        errored = has_error_status(os.path.join(d, f"{scenario}.pb"))
        entry["recorded"]["error_status"] = "present" if errored else "absent"
        entry["markers"] = {m: sorted(set(k)) for m, k in fmarkers.items()}
        entry["notes"] = rec.get("notes", "")
        files.append(entry)
    return {"configuration": conf,
            "packages": {p: metadata.version(p) for p in spec["packages"]},
            "settings": spec["settings"],
            "capture_script": spec["script"],
            "scope_names": sorted(all_scopes),
            "masking_markers": {m: sorted(k) for m, k in all_markers.items()},
            "notes": spec.get("notes", ""),
            "files": files}


if __name__ == "__main__":
    privacy_dir, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path) as fh:
        spec = json.load(fh)
    out = build(privacy_dir, spec)
    with open(os.path.join(privacy_dir, spec["configuration"], "capture.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(json.dumps(out["masking_markers"]), out["scope_names"])
