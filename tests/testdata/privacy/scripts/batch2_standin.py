"""Second batch of privacy captures (issue 15): the stand-in and capture.json writer shared by the batch-2 scripts.

Extends sdk_privacy_standin.py (OpenAI Chat Completions / Anthropic Messages, the capture harness) with:
- the Gemini API (google-genai SDK, google-adk): POST /v1beta/models/<model>:generateContent and
  :streamGenerateContent?alt=sse; tool call get_weather({"city": "Paris"}) when tools are offered, the tool answer when
  the last content carries a functionResponse; HTTP 500 {"error": {"code": 500, "status": "INTERNAL"}} on
  STATE.fail_next;
- the OpenAI Responses API (OpenAI Agents SDK): POST /v1/responses, non-streaming and SSE (response.created ..
  response.completed); tool call when tools are offered and no function_call_output is in the input yet;
- OpenAI Chat Completions: a non-streaming request mentioning "refund" (the d_rag scenario) gets RAG_ANSWER;
  the get_weather tool call echoes the offered tool's name where a framework prefixes it;
- OpenAI embeddings (POST /v1/embeddings: deterministic 8-dim vectors) for frameworks that embed.
Routing is by request content as in sdk_privacy_standin.py; every request is kept in STATE.requests.

`write_capture_json2` writes <configuration>/capture.json: ground truth per provider (with per-scenario overrides),
package versions read from the running venv, scope names, and the masking markers found verbatim in the files
(`masking_markers` per configuration and `markers` per file, each with the attribute keys carrying it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdk_privacy_standin as base  # noqa: E402
from sdk_privacy_standin import (  # noqa: E402
    ANSWER,
    OPENAI_RESPONSE_MODEL,
    OPENAI_TOOL_CALL_ID,
    OPENAI_USAGE,
    STATE,
    TOOL_ANSWER,
    Capture,
)

GEMINI_REQUEST_MODEL = "gemini-2.0-flash"
GEMINI_RESPONSE_MODEL = "gemini-2.0-flash-001"
GEMINI_USAGE = {"answer": (14, 8), "tool_call": (41, 5), "tool_answer": (58, 11)}
# d_rag (a chat request mentioning refunds): the captured set's RAG texts
RAG_QUESTION = "What is the refund window for annual plans?"
RAG_SYSTEM = "Answer the question using only the provided context."
RAG_ANSWER = "Annual plans can be refunded in full within 30 days of purchase; monthly plans are non-refundable."
RAG_USAGE = (60, 20)
PRIVACY_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
__all__ = ["Capture", "STATE", "start_standin"]


def _gemini_kind(body: dict[str, Any]) -> str:
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    if any("functionResponse" in p or "function_response" in p for p in last.get("parts") or []):
        return "tool_answer"
    return "tool_call" if body.get("tools") else "answer"


def _responses_kind(body: dict[str, Any]) -> str:
    items = body.get("input")
    if isinstance(items, list) and items and isinstance(items[-1], dict) and \
            items[-1].get("type") == "function_call_output":
        return "tool_answer"
    return "tool_call" if body.get("tools") else "answer"


class _Handler2(base._Handler):
    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        if ":generateContent" in path or ":streamGenerateContent" in path:
            self._with_body(lambda b: self._gemini(b, stream=":streamGenerateContent" in path))
        elif path.endswith("/responses"):
            self._with_body(self._responses)
        elif path.endswith("/embeddings"):
            self._with_body(self._embeddings)
        else:
            self._tool_name = "get_weather"
            super().do_POST()

    # echo the offered tool's name where a framework prefixes it (Semantic Kernel: 'WeatherPlugin-get_weather')
    _tool_name = "get_weather"

    def _offered_name(self, body: dict[str, Any]) -> str:
        for t in body.get("tools") or []:
            name = (t.get("function") or t).get("name", "")
            if name.endswith("get_weather"):
                return str(name)
        return "get_weather"

    def _openai(self, body: dict[str, Any]) -> None:
        self._tool_name = self._offered_name(body)
        if not STATE.fail_next and not body.get("stream") and "refund" in json.dumps(body.get("messages")).lower():
            i, o = RAG_USAGE
            self._json(200, {"id": f"chatcmpl-privacy{STATE.counter:04d}", "object": "chat.completion",
                             "created": 1764158400, "model": OPENAI_RESPONSE_MODEL,
                             "system_fingerprint": "fp_privacy01", "service_tier": "default",
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": RAG_ANSWER,
                                                                  "refusal": None},
                                          "logprobs": None, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}})
            return
        super()._openai(body)

    def _rename(self, text: str) -> str:
        if self._tool_name == "get_weather":
            return text
        return text.replace('"name": "get_weather"', f'"name": "{self._tool_name}"')

    # sdk_privacy_standin streams the Paris pieces for every text answer; a streamed tool answer gets its own text
    _TOOL_PIECES = (('"content": "The capital"', '"content": "It is 18C"'),
                    ('"content": " of France"', '"content": " and sunny"'),
                    ('"content": " is Paris."', '"content": " in Paris."'))

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super()._json(status, json.loads(self._rename(json.dumps(payload))), headers)

    def _sse(self, events: list[tuple[str | None, str]]) -> None:
        tool_answer = bool(STATE.requests) and base._kind(STATE.requests[-1]["body"], False) == "tool_answer" and \
            STATE.requests[-1]["path"].rstrip("/").endswith("/chat/completions")
        out = []
        for name, data in events:
            data = self._rename(data)
            if tool_answer:
                for old, new in self._TOOL_PIECES:
                    data = data.replace(old, new)
            out.append((name, data))
        super()._sse(out)

    def _with_body(self, fn: Any) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        STATE.requests.append({"path": self.path, "body": body})
        STATE.counter += 1
        fn(body)

    # ------------------------------------------------------------------ Gemini
    def _gemini(self, body: dict[str, Any], stream: bool) -> None:
        if STATE.fail_next:
            STATE.fail_next = False
            self._json(500, {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}})
            return
        kind = _gemini_kind(body)
        i, o = GEMINI_USAGE[kind]
        usage = {"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o,
                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": i}]}
        rid = f"privacyGem{STATE.counter:04d}"
        if kind == "tool_call":
            parts: list[dict[str, Any]] = [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]
        else:
            parts = [{"text": TOOL_ANSWER if kind == "tool_answer" else ANSWER}]
        cand = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        full = {"candidates": [cand], "usageMetadata": usage, "modelVersion": GEMINI_RESPONSE_MODEL,
                "responseId": rid, "createTime": "2026-11-26T12:00:00.000000Z"}
        if not stream:
            self._json(200, full)
            return
        pieces = ["The capital", " of France", " is Paris."] if kind == "answer" else None
        events: list[tuple[str | None, str]] = []
        if pieces:
            for n, piece in enumerate(pieces):
                last = n == len(pieces) - 1
                c: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
                chunk: dict[str, Any] = {"candidates": [c], "modelVersion": GEMINI_RESPONSE_MODEL, "responseId": rid}
                if last:
                    c["finishReason"] = "STOP"
                    chunk["usageMetadata"] = usage
                else:
                    chunk["usageMetadata"] = {"promptTokenCount": i, "totalTokenCount": i}
                events.append((None, json.dumps(chunk)))
        else:
            events.append((None, json.dumps(full)))
        self._sse(events)

    # ------------------------------------------------------------------ OpenAI Responses
    def _responses(self, body: dict[str, Any]) -> None:
        if STATE.fail_next:
            STATE.fail_next = False
            self._json(500, {"error": {"message": "The server had an error while processing your request.",
                                       "type": "server_error", "param": None, "code": "internal_error"}},
                       {"x-request-id": "req_privacy_err_0001"})
            return
        kind = _responses_kind(body)
        i, o = OPENAI_USAGE[kind]
        rid = f"resp_privacy{STATE.counter:04d}"
        if kind == "tool_call":
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_privacy{STATE.counter:04d}",
                                    "call_id": OPENAI_TOOL_CALL_ID, "name": "get_weather",
                                    "arguments": json.dumps({"city": "Paris"}), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_privacy{STATE.counter:04d}", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "annotations": [], "logprobs": [],
                                                      "text": TOOL_ANSWER if kind == "tool_answer" else ANSWER}]}
        resp: dict[str, Any] = {
            "id": rid, "object": "response", "created_at": 1764158400, "status": "completed", "error": None,
            "incomplete_details": None, "instructions": body.get("instructions"), "max_output_tokens": None,
            "model": OPENAI_RESPONSE_MODEL, "output": [item], "parallel_tool_calls": True,
            "previous_response_id": None, "reasoning": {"effort": None, "summary": None}, "store": True,
            "temperature": 1.0, "text": {"format": {"type": "text"}}, "tool_choice": "auto",
            "tools": body.get("tools") or [], "top_p": 1.0, "truncation": "disabled", "metadata": {},
            "usage": {"input_tokens": i, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": o,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": i + o}}
        if not body.get("stream"):
            self._json(200, resp)
            return
        seq = iter(range(1000))
        ev: list[tuple[str | None, str]] = []

        def add(name: str, payload: dict[str, Any]) -> None:
            ev.append((name, json.dumps({"type": name, "sequence_number": next(seq), **payload})))

        pending = {**resp, "status": "in_progress", "output": [], "usage": None}
        add("response.created", {"response": pending})
        add("response.in_progress", {"response": pending})
        if item["type"] == "message":
            add("response.output_item.added", {"output_index": 0, "item": {**item, "status": "in_progress",
                                                                            "content": []}})
            add("response.content_part.added", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                                 "part": {"type": "output_text", "text": "", "annotations": []}})
            for piece in ("The capital", " of France", " is Paris."):
                add("response.output_text.delta", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                                   "delta": piece, "logprobs": []})
            text = item["content"][0]["text"]
            add("response.output_text.done", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                              "text": text, "logprobs": []})
            add("response.content_part.done", {"item_id": item["id"], "output_index": 0, "content_index": 0,
                                               "part": {"type": "output_text", "text": text, "annotations": []}})
        else:
            add("response.output_item.added", {"output_index": 0, "item": {**item, "arguments": "",
                                                                            "status": "in_progress"}})
            add("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": 0,
                                                            "delta": item["arguments"]})
            add("response.function_call_arguments.done", {"item_id": item["id"], "output_index": 0,
                                                           "arguments": item["arguments"]})
        add("response.output_item.done", {"output_index": 0, "item": item})
        add("response.completed", {"response": resp})
        self._sse(ev)

    # ------------------------------------------------------------------ OpenAI embeddings
    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input")
        texts = inputs if isinstance(inputs, list) else [inputs]
        data = []
        for n, t in enumerate(texts):
            vec = [0.0] * 8
            for word in re.findall(r"[a-z0-9]+", str(t).lower()):
                vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % 8] += 1.0
            norm = sum(v * v for v in vec) ** 0.5 or 1.0
            data.append({"object": "embedding", "index": n, "embedding": [v / norm for v in vec]})
        self._json(200, {"object": "list", "data": data, "model": "text-embedding-3-small",
                         "usage": {"prompt_tokens": 8 * len(texts), "total_tokens": 8 * len(texts)}})


def start_standin() -> tuple[ThreadingHTTPServer, str]:
    """Start the extended stand-in on 127.0.0.1:<free port>; returns (server, 'http://127.0.0.1:<port>')."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler2)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def wait_until(pred: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.05)


# ---------------------------------------------------------------- capture.json

MARKER_RE = re.compile(r"__REDACTED__|\[Scrubbed due to '[^']*'\]|<elided>|\[REDACTED\]|\[redacted\]|"
                       r"<redacted>|\*\*\*\*+|\[MASKED\]|<masked>|\[HIDDEN\]|\[FILTERED\]|redacted-by-litellm|"
                       r"\bREDACTED\b|<fully masked due to failed mask function>")


def ground_truth(provider: str, scenario: str) -> dict[str, Any]:
    if provider != "gemini":
        return base.ground_truth(provider, scenario)
    gt = base.ground_truth("openai", scenario)
    u = GEMINI_USAGE
    gt.update(request_model=GEMINI_REQUEST_MODEL, response_model=GEMINI_RESPONSE_MODEL,
              input_tokens=u["answer"][0], output_tokens=u["answer"][1], finish_reason="STOP")
    if scenario == "c_tool_call":
        gt.update(input_tokens=u["tool_call"][0] + u["tool_answer"][0],
                  output_tokens=u["tool_call"][1] + u["tool_answer"][1], tool_call_ids=[])
    elif scenario == "f_error":
        gt.update(response_model=None, input_tokens=0, output_tokens=0, finish_reason=None)
    return gt


def _strings(value: Any, path: str) -> Any:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        yield path, value.string_value
    elif kind == "array_value":
        for v in value.array_value.values:
            yield from _strings(v, path)
    elif kind == "kvlist_value":
        for kv in value.kvlist_value.values:
            yield from _strings(kv.value, f"{path}.{kv.key}")


def scan(path: str) -> tuple[set[str], dict[str, list[str]], bool]:
    """(scope names, {marker: attribute keys carrying it}, any span with status ERROR) of one .pb / .logs.pb."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    scopes: set[str] = set()
    markers: dict[str, set[str]] = {}
    errored = False

    def note(where: str, text: str) -> None:
        for m in MARKER_RE.findall(text):
            markers.setdefault(m, set()).add(where)

    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".logs.pb"):
        lreq = ExportLogsServiceRequest.FromString(data)
        for rl in lreq.resource_logs:
            for sl in rl.scope_logs:
                scopes.add(sl.scope.name)
                for lr in sl.log_records:
                    for k, s in _strings(lr.body, "log.body"):
                        note(k, s)
                    for a in lr.attributes:
                        for k, s in _strings(a.value, f"log.attributes.{a.key}"):
                            note(k, s)
    else:
        treq = ExportTraceServiceRequest.FromString(data)
        for rs in treq.resource_spans:
            for ss in rs.scope_spans:
                scopes.add(ss.scope.name)
                for sp in ss.spans:
                    errored = errored or sp.status.code == 2
                    for a in sp.attributes:
                        for k, s in _strings(a.value, a.key):
                            note(k, s)
                    for ev in sp.events:
                        for a in ev.attributes:
                            for k, s in _strings(a.value, f"event[{ev.name}].{a.key}"):
                                note(k, s)
                    if sp.status.message:
                        note("status.message", sp.status.message)
    return scopes, {m: sorted(k) for m, k in markers.items()}, errored


def write_capture_json2(configuration: str, provider: str, package_names: list[str], settings: dict[str, Any],
                        recorded: dict[str, dict[str, str]], notes: dict[str, str], script: str,
                        gt_overrides: dict[str, dict[str, Any]] | None = None, extra: dict[str, Any] | None = None,
                        file_extra: dict[str, dict[str, Any]] | None = None) -> None:
    """Write <configuration>/capture.json; run in the configuration's venv (package versions come from it).

    `recorded[scenario]["error_status"]` is overwritten from the file (a span with status ERROR or not);
    `file_extra[scenario]` adds keys to that file's entry (e.g. `unmasked_content`: content found in clear in
    attributes the privacy switch does not cover, with the keys carrying it)."""
    from importlib.metadata import PackageNotFoundError, version

    out_dir = os.path.join(PRIVACY_DIR, configuration)
    packages: dict[str, str] = {}
    for name in package_names:
        with contextlib.suppress(PackageNotFoundError):
            packages[name] = version(name)
    files = []
    all_scopes: set[str] = set()
    all_markers: dict[str, set[str]] = {}
    for scenario in ("a_chat_correct", "c_tool_call", "d_rag", "f_error", "h_streaming_chat"):
        if scenario not in recorded or not os.path.exists(os.path.join(out_dir, f"{scenario}.pb")):
            continue
        entry: dict[str, Any] = {"file": f"{scenario}.pb", "scenario": scenario,
                                 "ground_truth": {**ground_truth(provider, scenario),
                                                  **(gt_overrides or {}).get(scenario, {})}}
        fmarkers: dict[str, set[str]] = {}
        errored = False
        for fname in (f"{scenario}.pb", f"{scenario}.logs.pb"):
            p = os.path.join(out_dir, fname)
            if not os.path.exists(p):
                continue
            if fname.endswith(".logs.pb"):
                entry["logs_file"] = fname
            scopes, markers, err = scan(p)
            errored = errored or err
            all_scopes |= scopes
            for m, keys in markers.items():
                fmarkers.setdefault(m, set()).update(keys)
                all_markers.setdefault(m, set()).update(keys)
        entry["recorded"] = {**recorded[scenario], "error_status": "present" if errored else "absent"}
        entry["markers"] = {m: sorted(k) for m, k in fmarkers.items()}
        entry["notes"] = notes.get(scenario, "")
        entry.update((file_extra or {}).get(scenario, {}))
        files.append(entry)
    doc: dict[str, Any] = {"configuration": configuration, "packages": packages, "settings": settings,
                           "capture_script": script, "scope_names": sorted(all_scopes),
                           "masking_markers": {m: sorted(k) for m, k in all_markers.items()}, "files": files}
    doc.update(extra or {})
    with open(os.path.join(out_dir, "capture.json"), "w") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    print("wrote", os.path.join(out_dir, "capture.json"), "markers:", doc["masking_markers"])
