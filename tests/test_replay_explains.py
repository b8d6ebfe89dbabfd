"""`evald replay` explains what it did not score: skips by reason, traces not evaluated, content capture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evald.cli import main

DATA = Path(__file__).resolve().parent / "testdata"
CONFIG = """
metrics:
  - { kind: error_free, scope: all }
  - { kind: contains, scope: all, options: { values: ["Paris"] } }
"""


def test_summary_and_output_account_for_every_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "out.jsonl"
    inputs = [DATA / "privacy" / "openinference-openai.hidden",  # a directory: capture.json is noted, not an error
              DATA / "corpus" / "otel-openai-v2.span_only" / "g_embeddings.pb"]
    assert main(["replay", *map(str, inputs), "--config", str(config), "--output", str(out),
                 "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["skipped_by_reason"] == {"missing_output": {"contains": 9}}
    assert summary["not_evaluable"] == {"no_inference_span": 1}
    assert summary["content_capture"] == {"openinference": {"masked": 9}}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    [unscored] = [r for r in rows if r["case"] is None]
    assert unscored["not_evaluable"][0]["reason"] == "no_inference_span" and unscored["scope"] == "trace"
    assert len([r for r in rows if r["case"]]) == 9


def test_the_table_names_the_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "evald.yaml"
    config.write_text(CONFIG)
    assert main(["replay", str(DATA / "privacy" / "traceloop-openai.no_content"), "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "missing_output: " in text and "openllmetry: none" in text
    assert "TRACELOOP_TRACE_CONTENT=true" in text


def test_a_file_larger_than_the_window_is_scored_whole(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    merged = ExportTraceServiceRequest()
    sources = sorted((DATA / "corpus" / "otel-openai-v2.span_only").glob("[abef]_*.pb"))
    for source in sources:  # one request holding every trace of four files
        request = ExportTraceServiceRequest()
        request.ParseFromString(source.read_bytes())
        merged.resource_spans.extend(request.resource_spans)
    big = tmp_path / "merged.pb"
    big.write_bytes(merged.SerializeToString())
    config = tmp_path / "evald.yaml"
    config.write_text(CONFIG + "assembly: { num_traces: 2 }\n")
    alone = tmp_path / "alone.yaml"
    alone.write_text(CONFIG)
    assert main(["replay", str(big), "--config", str(alone), "--format", "json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main(["replay", str(big), "--config", str(config), "--format", "json"]) == 0
    split = json.loads(capsys.readouterr().out)
    assert split["cases"] == whole["cases"] >= 8 and split["not_evaluable"] == whole["not_evaluable"] == {}
