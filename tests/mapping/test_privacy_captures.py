"""Privacy-mode traces (tests/testdata/privacy): what production deployments send with content capture off or masked.

Each configuration ran a real instrumentation library in a privacy mode (its default where content capture is off by
default) around the real SDK against a local API stand-in; ``capture.json`` records, per file, what the spans actually
carry (``recorded``: present / absent / empty / masked:<marker>). For every file this asserts, through the same
pipeline as ``evald replay``:

* the file is scored on what it recorded: every inference call gives its cases, and ``error_free`` / ``latency`` (and
  ``token_usage`` where usage was recorded) score;
* a content field the emitter did not record or masked is absent (``None``), the case's ``content_capture`` says so,
  and every content metric skips with ``missing_<field>``: none ever scores absent or masked content;
* no masking marker appears anywhere in a case or a score.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evald.config.loader import parse_config
from evald.model import ScoredCase
from evald.replay import replay

PRIVACY = Path(__file__).resolve().parents[1] / "testdata" / "privacy"
MARKERS = ("__REDACTED__", "[Scrubbed due to", "[REDACTED]", '"REDACTED"', "<elided>", "redacted-by-litellm")
CONFIG = """
metrics:
  - { kind: error_free, scope: all }
  - { kind: latency, scope: all, options: { max_ms: 60000 } }
  - { kind: token_usage, scope: all, options: { max_tokens: 100000 } }
  - { kind: contains, scope: all, options: { values: ["Paris"] } }
  - { kind: regex, scope: all, options: { pattern: "[A-Z]" } }
  - { kind: pii_leak, scope: all }
  - { kind: prompt_injection, scope: all }
  - { kind: tool_called, scope: trace, options: { tool: get_weather } }
  - { kind: exact_match, scope: all }
"""
CONTENT_METRICS = {"contains": "output", "regex": "output", "pii_leak": "output", "prompt_injection": "input",
                   "exact_match": "output"}
_NOT_RECORDED = ("absent", "empty")


def _entries() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for manifest in sorted(PRIVACY.glob("*/capture.json")):
        capture = json.loads(manifest.read_text())
        for entry in capture["files"]:
            if entry["file"].endswith(".logs.pb"):
                continue  # the companion of a .pb, loaded with it
            out.append((manifest.parent.name, entry))
    return out


ENTRIES = _entries()


def _score(configuration: str, entry: dict[str, Any]) -> list[ScoredCase]:
    path = PRIVACY / configuration / entry["file"]
    companion = path.with_name(path.name.removesuffix(".pb") + ".logs.pb")  # content on log records
    inputs = [path, companion] if companion.exists() else [path]
    result = asyncio.run(replay(inputs, parse_config(CONFIG, "test", environ={})))
    return list(result.scored)


def _recorded(entry: dict[str, Any], name: str) -> str:
    value = entry.get("recorded", {}).get(name, "absent")
    return "masked" if value.startswith("masked") else value


def test_the_capture_set_covers_the_privacy_modes() -> None:
    configurations = {c for c, _ in ENTRIES}
    assert len(ENTRIES) >= 50 and len(configurations) >= 10
    for prefix in ("otel-openai-v2", "traceloop-openai", "traceloop-anthropic", "openinference-openai",
                   "openinference-langchain", "pydantic-ai", "anthropic-sdk-native", "logfire"):
        assert any(c.startswith(prefix) for c in configurations), prefix


@pytest.mark.parametrize(("configuration", "entry"), ENTRIES, ids=[f"{c}/{e['file']}" for c, e in ENTRIES])
def test_scored_on_what_was_recorded(configuration: str, entry: dict[str, Any]) -> None:
    scored = _score(configuration, entry)
    truth = entry["ground_truth"]
    assert scored, "no case: the file must be scored on what it recorded"
    traces = [s for s in scored if s.case.scope == "trace"]
    assert traces
    for item in scored:
        case = item.case
        names = {s.name: s for s in item.scores}
        skipped = dict(item.skipped)
        assert "error_free" in names and "latency" in names, (item.skipped, item.errors)
        if _recorded(entry, "tokens") == "present" and not truth.get("error"):
            assert "token_usage" in names, skipped
        line = item.to_json_line()
        line["case"]["metadata"].pop("mask_marker", None)  # the diagnosis names the marker it saw, on purpose
        text = json.dumps(line, default=str)
        assert not any(marker in text for marker in MARKERS), "a masking marker reached a case or a score"
        for metric, needed in CONTENT_METRICS.items():
            if getattr(case, needed) is None:
                assert metric not in names, f"{metric} scored absent {needed}"
                if metric != "exact_match":  # no golden: exact_match always lacks `expected`
                    assert skipped.get(metric) == f"missing_{needed}", (metric, skipped)
        assert skipped.get("exact_match", "").startswith("missing_")  # never a 0 for lack of a golden
    trace = traces[-1].case
    status = trace.metadata["content_capture"]
    input_recorded = _recorded(entry, "input")
    if input_recorded in _NOT_RECORDED or input_recorded == "masked":
        assert trace.input is None
        assert status in ("none", "masked", "partial")
    if input_recorded == "masked" and _recorded(entry, "output") in ("masked", *_NOT_RECORDED):
        assert status == "masked" and trace.metadata.get("mask_marker")
    if input_recorded in _NOT_RECORDED and _recorded(entry, "output") in _NOT_RECORDED and not trace.tool_calls:
        assert status == "none"
    if input_recorded == "present":
        assert trace.input is not None
    if _recorded(entry, "output") in (*_NOT_RECORDED, "masked"):
        assert trace.output is None  # nothing invented: no answer where the spans carry none
    if _recorded(entry, "output") == "present" and not truth.get("error"):
        assert trace.output is not None or trace.tool_calls
    if _recorded(entry, "request_model") == "present":
        assert trace.request_model or trace.model
    assert trace.error is bool(truth.get("error"))
    assert trace.metadata["instrumentation"] != "other"
